import { type WriteStream, createWriteStream } from 'node:fs';
import type { AuthOutcome, SessionCreated } from '@ziti/http-kit';
import type { Cache, EventBus, Subscription } from '@ziti/messaging';
import { type Namespace, type OpenZitiRecord, type RecordSource, authenticationRecords, entityCountRecord, sessionRecord, toRecords } from './openziti-records.js';
import { LINK_EVENT_TYPES } from './fabric-records.js';

/** The event stream's settings (`loadEventStreamConfig`). */
export interface EventStreamConfig {
  /** The namespaces emitted (`ZITI_EVENTS`). */
  namespaces: readonly Namespace[];
  /** A JSON-lines file each record is appended to (`ZITI_EVENTS_FILE`); none by default. */
  file?: string;
  /** Period of `entityCount` records (`ZITI_EVENTS_ENTITY_COUNT_INTERVAL`, OpenZiti's default 5 m). */
  entityCountIntervalMs: number;
}

export interface EventStreamDeps extends EventStreamConfig {
  bus: EventBus;
  /** The cache every replica shares: the claim of each `entityCount` period. */
  sharedCache: Cache;
  source: RecordSource;
  /** The entity counts of `GET /summary`. */
  countEntities: () => Promise<Record<string, number>>;
  log: (m: string) => void;
}

/** Consumer group shared by every gateway replica: each change event becomes records once. */
export const EVENT_STREAM_GROUP = 'gateway-event-stream';

/**
 * The change events each namespace is made from, by source. `session.deleted` is published on the
 * bus directly by session, and fabric's `router.*`, `circuit.*` and `link.*` by fabric (best-effort, no
 * outbox; `router.metrics`, one per router metrics message, only while `metrics` or `usage` is
 * wanted); the others are outbox events. The hot paths
 * publish nothing: a login's `authentication` records (and the `apiSession` `created` of a
 * success) and a session's `created` come from what identity-auth and session hand back on their
 * answers (`authenticated`, `sessionCreated`).
 */
const SOURCES: Record<Exclude<Namespace, 'entityCount'>, Record<string, string[]>> = {
  entityChange: {
    'identity-auth': ['identity.*', 'auth-policy.*'],
    'pki-enrollment': ['ca.verified', 'ca.deleted'],
    policy: ['router.deleted'],
    posture: ['posture-check.*'],
  },
  apiSession: { 'identity-auth': ['api-session.deleted'] },
  authentication: {},
  session: { session: ['session.deleted'] },
  router: { fabric: ['router.connected', 'router.disconnected'] },
  circuit: { fabric: ['circuit.created', 'circuit.updated', 'circuit.deleted', 'circuit.failed'] },
  link: { fabric: LINK_EVENT_TYPES.map((t) => `link.${t}`) },
  metrics: { fabric: ['router.metrics'] },
  usage: { fabric: ['router.metrics'] },
};

/** The (source, types) subscriptions the namespaces need, one per source. */
export function subscriptionsFor(namespaces: readonly Namespace[]): [string, string[]][] {
  const bySource = new Map<string, Set<string>>();
  for (const ns of namespaces) {
    if (ns === 'entityCount') continue;
    for (const [source, types] of Object.entries(SOURCES[ns])) {
      const set = bySource.get(source) ?? new Set<string>();
      types.forEach((t) => set.add(t));
      bySource.set(source, set);
    }
  }
  return [...bySource].map(([source, types]) => [source, [...types].sort()]);
}

/** Cache key claiming one `entityCount` period (the number of the period since the epoch). */
export const entityCountSlotKey = (slot: number) => `ziti:events:entity-count:${slot}`;

export interface RunningEventStream {
  /** A login's outcome, as the gateway saw it on identity-auth's answer. */
  authenticated(outcome: AuthOutcome): void;
  /** A session created, as the gateway saw it on session's answer. */
  sessionCreated(session: SessionCreated): void;
  /** Ends the subscriptions and the timer, then closes the file. */
  stop(): Promise<void>;
}

/**
 * OpenZiti-format event records, once per cluster:
 * - change events are consumed by one durable consumer group shared by the gateway replicas
 *   (each event reaches one of them) and translated (`toRecords`);
 * - `entityCount` is emitted every interval by the replica that claims the period in the shared
 *   cache (`SET NX` of `ziti:events:entity-count:<period>`), first at start, as OpenZiti does;
 * - each record of an enabled namespace goes to NATS (`bus.publishRecord`: a plain publish on
 *   `<prefix>.<namespace>`; nothing with the in-process bus) and, with `file`, as one JSON line
 *   appended to it (each replica writes the records it emitted).
 * Best-effort, as OpenZiti's events: a record that cannot be written is logged and lost.
 */
export async function startEventStream(deps: EventStreamDeps): Promise<RunningEventStream> {
  const enabled = new Set<string>(deps.namespaces);
  let file: WriteStream | undefined;
  if (deps.file) {
    const out = createWriteStream(deps.file, { flags: 'a' });
    out.on('error', (err) => deps.log(`events: writing ${deps.file} failed: ${err.message}`));
    file = out;
  }
  const emit = (record: OpenZitiRecord) => {
    if (!enabled.has(record.namespace)) return;
    deps.bus.publishRecord(record.namespace, record);
    file?.write(`${JSON.stringify(record)}\n`);
  };

  const subscriptions: Subscription[] = [];
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const stop = async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    await Promise.all(subscriptions.splice(0).map((s) => s.stop().catch((err: Error) => deps.log(`events: unsubscribe failed: ${err.message}`))));
    if (file) {
      const out = file;
      await new Promise<void>((resolve) => out.end(resolve));
    }
  };
  try {
    for (const [source, types] of subscriptionsFor(deps.namespaces)) {
      subscriptions.push(
        await deps.bus.subscribeDurable(EVENT_STREAM_GROUP, source, types, (event) => {
          for (const record of toRecords(event, deps.source)) emit(record);
        }),
      );
    }
  } catch (err) {
    await stop();
    throw err;
  }

  if (enabled.has('entityCount')) {
    const interval = deps.entityCountIntervalMs;
    const ttlSeconds = Math.max(1, Math.ceil(interval / 1000));
    const tick = async () => {
      const slot = Math.floor(Date.now() / interval);
      try {
        if (await deps.sharedCache.setIfAbsent(entityCountSlotKey(slot), deps.source.controllerId, ttlSeconds)) {
          const at = new Date();
          // The cause goes to the log only: records leave the cluster.
          const result = await deps.countEntities().then(
            (counts) => ({ counts }),
            (err: Error) => {
              deps.log(`events: counting entities failed: ${err.message}`);
              return { error: 'the entity counts could not be read' };
            },
          );
          emit(entityCountRecord(deps.source, at, result));
        }
      } catch (err) {
        deps.log(`events: entity counts not emitted: ${(err as Error).message}`);
      }
      if (!stopped) {
        timer = setTimeout(() => void tick(), (slot + 1) * interval - Date.now());
        timer.unref();
      }
    };
    void tick();
  }
  return {
    authenticated: (outcome) => {
      for (const record of authenticationRecords(deps.source, new Date(), outcome)) emit(record);
    },
    sessionCreated: (session) => {
      emit(sessionRecord({ event_src_id: deps.source.controllerId, timestamp: new Date().toISOString() }, 'created', { ...session }));
    },
    stop,
  };
}
