import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  Events,
  JSONCodec,
  RetentionPolicy,
  StorageType,
  connect,
  nanos,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
} from 'nats';
import { dependencies, describeFailure, unavailableDependency } from '@ziti/errors';
import { natsConsumerPending } from '@ziti/metrics';
import { consumed, inEventRequest } from './consumed.js';
import {
  assertPublishable,
  assertSource,
  backoffMs,
  compileFilter,
  defaultLog,
  durableName,
  eventSubject,
  filterSubject,
  type EventFilter,
  type Logger,
} from './subjects.js';
import type { ChangeEvent, EventBus, EventHandler, Subscription } from './types.js';

/** Options of {@link createNatsBus}. Only `url` is required. */
export interface NatsBusOptions {
  /** e.g. `nats://127.0.0.1:4222` (comma-separated list allowed). */
  url: string;
  /** JetStream stream holding the events. Default `ZITI_EVENTS`. */
  stream?: string;
  /** Subject prefix; events go to `<prefix>.<source>.<type>`. Default `ziti.events`. */
  subjectPrefix?: string;
  /** Connection name shown by the NATS server (e.g. the service name). */
  name?: string;
  /** How long the stream keeps events (limits retention). Default 24 h. */
  maxAgeMs?: number;
  /** Durable consumers: first redelivery delay after a handler throws (doubling). Default 200 ms. */
  retryBaseMs?: number;
  /** Durable consumers: cap of the redelivery delay. Default 30 s. */
  retryMaxMs?: number;
  /** Durable consumers: deliveries of one event before it is logged and dropped. Default 20. */
  maxDeliver?: number;
  /** Durable consumers: time a handler may take before the event is redelivered. Default 30 s. */
  ackWaitMs?: number;
  /** Where handler failures and other non-fatal problems are reported. Default the `messaging` log. */
  log?: Logger;
}

const codec = JSONCodec<ChangeEvent>();
const DUPLICATE_WINDOW_MS = 2 * 60_000;
/** Messages pulled ahead per durable subscription; small so replicas share work and acks stay timely. */
const DURABLE_PREFETCH = 8;
/** Longest pause between the runs of a handler that fails because a dependency is down (and of a stop's wait for it). */
const OUTAGE_RETRY_MAX_MS = 2_000;

/**
 * The NATS JetStream event bus.
 *
 * - Connects and ensures the stream exists: subjects `<prefix>.*.>` (every `<source>.<type>`),
 *   file storage, limits retention (max age 24 h), duplicate window 2 min. An existing stream is
 *   reused; the prefix's subject is added to it when it captures neither that nor `<prefix>.>`
 *   (the subject of earlier versions, kept: such a stream also stores the records).
 * - `publishRecord(name, …)` is a core publish on `<prefix>.<name>`: not stored, best-effort.
 * - `publish` sends `<prefix>.<source>.<type>` (e.g. `ziti.events.identity-auth.identity.deleted`)
 *   with `Nats-Msg-Id` = `event.id`, so a re-publish within the window is dropped by the server.
 * - `subscribeDurable(group, …)` uses a durable pull consumer named `<group>__<source|all>__<hash
 *   of types>` (see `durableName`), explicit ack, deliver-all on first creation. The event is
 *   acked after the handler resolves; a throw naks it with exponential delay (`retryBaseMs`…
 *   `retryMaxMs`); after `maxDeliver` deliveries it is logged and terminated. A throw because a
 *   dependency is down is not one of those: the handler runs again in place until it is back
 *   (see `handleThroughOutage`), so an outage drops no event. Replicas of a group
 *   pull from the same consumer, so each event is handled by one of them. The consumer has one
 *   filter subject (nats-server 2.9): exact for a single type pattern, otherwise
 *   `<prefix>.<source|*>.>` with the other types filtered (and acked) in code.
 * - `subscribeBroadcast` uses an ordered (ephemeral, client-tracked) consumer with deliver-policy
 *   `new`: each subscriber sees every event stored after it subscribed, exactly once per stored
 *   event, resuming after reconnects. Handler errors are logged, not retried.
 * - The connection is watched (`status()`): a disconnect logs one `dependency nats lost` line
 *   (`dependencies` of `@ziti/errors`), `publish` then fails at once (`BUS_UNAVAILABLE`) and
 *   `onConnectionChange` listeners (the outbox relays) hold their events; the reconnect logs the
 *   return, with the count of events held back meanwhile, and tells the listeners.
 * - `close()` stops the subscriptions (waiting for running handlers) and drains the connection.
 */
export async function createNatsBus(opts: NatsBusOptions): Promise<EventBus> {
  const stream = opts.stream ?? 'ZITI_EVENTS';
  const prefix = opts.subjectPrefix ?? 'ziti.events';
  const log = opts.log ?? defaultLog;
  const retryBaseMs = opts.retryBaseMs ?? 200;
  const retryMaxMs = opts.retryMaxMs ?? 30_000;
  const maxDeliver = opts.maxDeliver ?? 20;
  const ackWaitMs = opts.ackWaitMs ?? 30_000;

  // Retried every half second while the server is away, so the bus is back soon after it is.
  const nc = await connect({ servers: opts.url.split(','), name: opts.name, maxReconnectAttempts: -1, reconnectTimeWait: 500 });
  try {
    const jsm = await nc.jetstreamManager();
    await ensureStream(jsm, stream, prefix, opts.maxAgeMs ?? 24 * 3600_000);
    return new NatsBus(nc, nc.jetstream(), jsm, {
      stream, prefix, log, retryBaseMs, retryMaxMs, maxDeliver, ackWaitMs,
    });
  } catch (err) {
    await nc.close().catch(() => undefined);
    throw err;
  }
}

async function ensureStream(jsm: JetStreamManager, name: string, prefix: string, maxAgeMs: number): Promise<void> {
  // Events always have a source and a type (two tokens at least); one-token subjects under the
  // prefix are the plain records of `publishRecord`, which a new stream does not capture. A stream
  // of an earlier version (`<prefix>.>`) is left as it is: replicas of that version would add
  // `<prefix>.>` again, which NATS refuses next to `<prefix>.*.>` (overlap), and fail to start.
  const subject = `${prefix}.*.>`;
  const covering = [subject, `${prefix}.>`];
  for (let attempt = 0; ; attempt++) {
    const info = await jsm.streams.info(name).catch((err) => {
      if (isNotFound(err)) return null;
      throw err;
    });
    if (info) {
      const subjects = info.config.subjects ?? [];
      if (!subjects.some((s) => covering.includes(s))) {
        await jsm.streams.update(name, { ...info.config, subjects: [...subjects, subject] });
      }
      return;
    }
    try {
      await jsm.streams.add({
        name,
        subjects: [subject],
        storage: StorageType.File,
        retention: RetentionPolicy.Limits,
        discard: DiscardPolicy.Old,
        max_age: nanos(maxAgeMs),
        duplicate_window: nanos(DUPLICATE_WINDOW_MS),
        num_replicas: 1,
      });
      return;
    } catch (err) {
      // Another replica may have created it meanwhile: look again once.
      if (attempt >= 1) throw err;
    }
  }
}

function isNotFound(err: unknown): boolean {
  const e = err as { code?: string; api_error?: { code?: number }; message?: string };
  return e?.api_error?.code === 404 || e?.code === '404' || /not found/i.test(e?.message ?? '');
}

interface BusConfig {
  stream: string;
  prefix: string;
  log: Logger;
  retryBaseMs: number;
  retryMaxMs: number;
  maxDeliver: number;
  ackWaitMs: number;
}

class NatsBus implements EventBus {
  private readonly subs = new Set<Subscription>();
  private readonly connectionListeners = new Set<(connected: boolean) => void>();
  private connected = true;
  private closed = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly cfg: BusConfig,
  ) {
    void (async () => {
      const err = await nc.closed();
      if (err && !this.closed) cfg.log('NATS connection closed with an error', err);
    })();
    void this.watchConnection();
  }

  /** Follows the connection's status until it closes (see the class comment). */
  private async watchConnection(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (this.closed) break;
      if (s.type === Events.Disconnect && this.connected) {
        this.connected = false;
        dependencies.lost('nats', `disconnected from ${String(s.data)}`);
        for (const l of this.connectionListeners) l(false);
      } else if (s.type === Events.Reconnect && !this.connected) {
        this.connected = true;
        dependencies.up('nats');
        for (const l of this.connectionListeners) l(true);
      }
    }
  }

  onConnectionChange(listener: (connected: boolean) => void): () => void {
    this.connectionListeners.add(listener);
    return () => this.connectionListeners.delete(listener);
  }

  async publish(event: ChangeEvent): Promise<void> {
    this.assertOpen();
    assertPublishable(event);
    if (!this.connected) throw Object.assign(new Error('the event bus is disconnected'), { code: 'BUS_UNAVAILABLE' });
    await this.js.publish(eventSubject(this.cfg.prefix, event), codec.encode(event), {
      msgID: event.id,
      expect: { streamName: this.cfg.stream },
    });
  }

  publishRecord(name: string, record: object): void {
    if (this.closed) return;
    try {
      assertSource(name, false);
      this.nc.publish(`${this.cfg.prefix}.${name}`, JSON.stringify(record));
    } catch (err) {
      this.cfg.log(`publishing a ${name} record failed`, err);
    }
  }

  async subscribeDurable(group: string, source: string, types: string[], handler: EventHandler): Promise<Subscription> {
    this.assertOpen();
    const filter = compileFilter(source, types);
    const name = durableName(group, filter);
    await this.ensureConsumer(name, filterSubject(this.cfg.prefix, filter));
    const consumer = await this.js.consumers.get(this.cfg.stream, name);
    const messages = await consumer.consume({ max_messages: DURABLE_PREFETCH });
    return this.track(messages, (m, stopping) => this.handleDurable(name, filter, consumed(group, handler), m, stopping));
  }

  async subscribeBroadcast(source: string, types: string[], handler: EventHandler): Promise<Subscription> {
    this.assertOpen();
    const filter = compileFilter(source, types);
    const consumer = await this.js.consumers.get(this.cfg.stream, {
      filterSubjects: filterSubject(this.cfg.prefix, filter),
      deliver_policy: DeliverPolicy.New,
    });
    // consume() creates the server-side consumer before resolving, so later events are seen.
    const messages = await consumer.consume({ max_messages: 64 });
    return this.track(
      messages,
      async (m) => {
        const event = this.decode(m);
        if (!event || !filter.matches(event)) return;
        await inEventRequest(event, async () => {
          try {
            await consumed('broadcast', handler)(event);
          } catch (err) {
            const down = unavailableDependency(err);
            if (down) dependencies.failed(down, describeFailure(err));
            else this.cfg.log(`broadcast handler failed for ${event.source}/${event.type} ${event.id}`, err);
          }
        });
      },
      () => consumer.delete().then(() => undefined),
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subs].map((s) => s.stop()));
    await this.nc.drain().catch((err) => this.cfg.log('NATS drain failed', err));
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('event bus is closed');
  }

  /** Runs the message loop of a subscription and returns its handle. */
  private track(
    messages: ConsumerMessages,
    onMessage: (m: JsMsg, stopping: () => boolean) => Promise<void>,
    cleanup?: () => Promise<void>,
  ): Subscription {
    let stopping = false;
    const loop = (async () => {
      try {
        for await (const m of messages) await onMessage(m, () => stopping);
      } catch (err) {
        if (!stopping) this.cfg.log('event subscription ended with an error', err);
      }
    })();
    const sub: Subscription = {
      stop: async () => {
        if (stopping) return loop;
        stopping = true;
        this.subs.delete(sub);
        messages.stop();
        await loop;
        await cleanup?.().catch(() => undefined);
      },
    };
    this.subs.add(sub);
    return sub;
  }

  private async handleDurable(name: string, filter: EventFilter, handler: EventHandler, m: JsMsg, stopping: () => boolean) {
    if (stopping()) {
      m.nak(); // prefetched but not started: hand it straight back to the other replicas
      return;
    }
    // Messages of this consumer not yet delivered (the server's count as of this delivery).
    natsConsumerPending.set({ consumer: name }, m.info.pending);
    const event = this.decode(m);
    if (!event) return;
    if (!filter.matches(event)) {
      m.ack();
      return;
    }
    // Its failures are logged with the id of the request that caused it.
    await inEventRequest(event, () => this.settleDurable(name, handler, m, event, stopping));
  }

  /** Runs the handler and acks the message, or naks it for a retry (terminates it after `maxDeliver`). */
  private async settleDurable(name: string, handler: EventHandler, m: JsMsg, event: ChangeEvent, stopping: () => boolean): Promise<void> {
    try {
      await this.handleThroughOutage(handler, event, m, stopping);
    } catch (err) {
      const n = m.info.deliveryCount;
      if (unavailableDependency(err)) {
        m.nak(); // the subscription stops during an outage: another replica takes it over
        return;
      }
      if (n >= this.cfg.maxDeliver) {
        this.cfg.log(`consumer ${name}: dropping ${event.type} ${event.id} after ${n} failed deliveries`, err);
        m.term();
      } else {
        this.cfg.log(`consumer ${name}: handler failed for ${event.type} ${event.id} (delivery ${n}), will retry`, err);
        m.nak(backoffMs(n, this.cfg.retryBaseMs, this.cfg.retryMaxMs));
      }
      return;
    }
    try {
      await m.ackAck();
    } catch (err) {
      this.cfg.log(`consumer ${name}: ack of ${event.id} failed; it will be redelivered`, err);
    }
  }

  /**
   * Runs the handler; while it fails because a dependency is down (`unavailableDependency`), runs
   * it again here, keeping the message in progress (`working()`) and counting each failure for the
   * outage's one log line, so that an outage longer than `maxDeliver` redeliveries drops nothing
   * (the consumer's later events wait behind it, in order). Throws that failure once the
   * subscription stops, and any other failure at once.
   */
  private async handleThroughOutage(handler: EventHandler, event: ChangeEvent, m: JsMsg, stopping: () => boolean): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await handler(event);
        return;
      } catch (err) {
        const down = unavailableDependency(err);
        if (!down || stopping() || this.closed) throw err;
        dependencies.failed(down, describeFailure(err));
        m.working();
        await new Promise((r) => setTimeout(r, backoffMs(attempt, this.cfg.retryBaseMs, Math.min(this.cfg.retryMaxMs, OUTAGE_RETRY_MAX_MS))));
      }
    }
  }

  /** Parses an event; a malformed message is logged and terminated (never redelivered). */
  private decode(m: JsMsg): ChangeEvent | undefined {
    try {
      const event = codec.decode(m.data);
      if (event && typeof event.id === 'string' && typeof event.type === 'string') return event;
    } catch {
      // fall through
    }
    this.cfg.log(`dropping malformed event on ${m.subject} (stream seq ${m.seq})`);
    m.term();
    return undefined;
  }

  /** Creates the durable consumer, or aligns the mutable settings of an existing one. */
  private async ensureConsumer(name: string, subject: string): Promise<void> {
    const { stream, ackWaitMs, maxDeliver } = this.cfg;
    const tunables = { ack_wait: nanos(ackWaitMs), max_deliver: maxDeliver };
    for (let attempt = 0; ; attempt++) {
      const info = await this.jsm.consumers.info(stream, name).catch((err) => {
        if (isNotFound(err)) return null;
        throw err;
      });
      if (info) {
        if (info.config.filter_subject !== subject) {
          throw new Error(`consumer ${name} exists with filter ${info.config.filter_subject}, expected ${subject}`);
        }
        if (info.config.ack_wait !== tunables.ack_wait || info.config.max_deliver !== maxDeliver) {
          await this.jsm.consumers.update(stream, name, tunables);
        }
        return;
      }
      try {
        await this.jsm.consumers.add(stream, {
          durable_name: name,
          filter_subject: subject,
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All,
          max_ack_pending: 1000,
          ...tunables,
        });
        return;
      } catch (err) {
        if (attempt >= 1) throw err; // a replica may have created it concurrently: look again once
      }
    }
  }
}
