import {
  RecentIds,
  assertPublishable,
  backoffMs,
  compileFilter,
  defaultLog,
  durableName,
  type EventFilter,
  type Logger,
} from './subjects.js';
import { consumed, inEventRequest } from './consumed.js';
import type { ChangeEvent, EventBus, EventHandler, Subscription } from './types.js';

/** Options of {@link createInProcessBus}; all optional. */
export interface InProcessBusOptions {
  /** Event ids remembered for deduplication, and events kept for new groups. Default 10 000. */
  capacity?: number;
  /** Deliveries of one event to a durable group before it is logged and dropped. Default 5. */
  maxAttempts?: number;
  /** First retry delay after a handler throws (doubling). Default 50 ms. */
  retryBaseMs?: number;
  /** Cap of the retry delay. Default 2 s. */
  retryMaxMs?: number;
  /** Where handler failures are reported. Default the `messaging` log. */
  log?: Logger;
}

/** The in-process bus, with a test hook. */
export interface InProcessEventBus extends EventBus {
  /**
   * Resolves once nothing is queued, running or waiting for a retry (groups without any
   * subscriber excluded). For tests and orderly shutdown; not part of {@link EventBus}.
   */
  idle(): Promise<void>;
}

interface Member {
  handler: EventHandler;
  running?: Promise<void>;
}

interface Group {
  filter: EventFilter;
  members: Member[];
  next: number;
  queue: { event: ChangeEvent; attempt: number }[];
  busy: boolean;
}

interface Broadcast {
  filter: EventFilter;
  handler: EventHandler;
  running: Set<Promise<void>>;
}

/**
 * The event bus of the embedded controller (one process), with the semantics of the NATS bus:
 *
 * - `publish` drops an id seen among the last `capacity` events, then resolves; handlers run
 *   later (never inside `publish`). Events are delivered as JSON copies, as over the wire.
 * - Durable groups (keyed like NATS consumers: group + source + types): each event goes to one
 *   subscriber of the group (round-robin), one at a time per group in publish order. A throw is
 *   retried with exponential backoff (`retryBaseMs`…`retryMaxMs`), possibly on another
 *   subscriber, up to `maxAttempts` deliveries, then logged and dropped. A group created after
 *   events were published first receives the matching ones still in the recent history (as a
 *   NATS durable consumer starts from the stream's retained events). Events for a group whose
 *   subscribers all stopped wait for the next subscriber.
 * - Broadcast: every subscriber gets every event published after it subscribed; errors are
 *   logged, not retried.
 * - `close()` waits for running handlers; pending retries are dropped.
 */
export function createInProcessBus(opts: InProcessBusOptions = {}): InProcessEventBus {
  return new InProcessBus(opts);
}

class InProcessBus implements InProcessEventBus {
  private readonly capacity: number;
  private readonly maxAttempts: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly log: Logger;
  private readonly seen: RecentIds;
  private readonly history: ChangeEvent[] = [];
  private readonly groups = new Map<string, Group>();
  private readonly broadcasts = new Set<Broadcast>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private scheduled = 0;
  private closed = false;

  constructor(opts: InProcessBusOptions) {
    this.capacity = opts.capacity ?? 10_000;
    this.maxAttempts = opts.maxAttempts ?? 5;
    this.retryBaseMs = opts.retryBaseMs ?? 50;
    this.retryMaxMs = opts.retryMaxMs ?? 2_000;
    this.log = opts.log ?? defaultLog;
    this.seen = new RecentIds(this.capacity);
  }

  async publish(event: ChangeEvent): Promise<void> {
    this.assertOpen();
    assertPublishable(event);
    const stored = JSON.parse(JSON.stringify(event)) as ChangeEvent;
    if (!this.seen.add(stored.id)) return;
    this.history.push(stored);
    if (this.history.length > this.capacity) this.history.shift();
    for (const group of this.groups.values()) {
      if (group.filter.matches(stored)) this.enqueue(group, stored, 1);
    }
    for (const b of this.broadcasts) {
      if (b.filter.matches(stored)) this.runBroadcast(b, stored);
    }
  }

  async subscribeDurable(group: string, source: string, types: string[], handler: EventHandler): Promise<Subscription> {
    this.assertOpen();
    const filter = compileFilter(source, types);
    const key = durableName(group, filter);
    let g = this.groups.get(key);
    if (!g) {
      g = { filter, members: [], next: 0, queue: [], busy: false };
      this.groups.set(key, g);
      for (const e of this.history) if (filter.matches(e)) g.queue.push({ event: e, attempt: 1 });
    }
    const member: Member = { handler: consumed(group, handler) };
    g.members.push(member);
    this.pump(g);
    const grp = g;
    return {
      stop: async () => {
        const i = grp.members.indexOf(member);
        if (i >= 0) grp.members.splice(i, 1);
        await member.running;
      },
    };
  }

  async subscribeBroadcast(source: string, types: string[], handler: EventHandler): Promise<Subscription> {
    this.assertOpen();
    const b: Broadcast = { filter: compileFilter(source, types), handler: consumed('broadcast', handler), running: new Set() };
    this.broadcasts.add(b);
    return {
      stop: async () => {
        this.broadcasts.delete(b);
        await Promise.all(b.running);
      },
    };
  }

  async idle(): Promise<void> {
    while (this.busy()) await new Promise((r) => setTimeout(r, 2));
  }

  publishRecord(): void {
    // Nothing outside this process can subscribe.
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const g of this.groups.values()) g.queue.length = 0;
    this.broadcasts.clear();
    await this.idle();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('event bus is closed');
  }

  private busy(): boolean {
    if (this.timers.size > 0 || this.scheduled > 0) return true;
    for (const g of this.groups.values()) {
      if (g.busy || (g.members.length > 0 && g.queue.length > 0)) return true;
    }
    for (const b of this.broadcasts) if (b.running.size > 0) return true;
    return false;
  }

  private enqueue(group: Group, event: ChangeEvent, attempt: number): void {
    group.queue.push({ event, attempt });
    this.pump(group);
  }

  /** Starts the group's worker (on a later tick) unless it is running or has no subscriber. */
  private pump(group: Group): void {
    if (group.busy || group.members.length === 0 || group.queue.length === 0) return;
    group.busy = true;
    this.scheduled++;
    setImmediate(() => {
      this.scheduled--;
      void this.work(group);
    });
  }

  private async work(group: Group): Promise<void> {
    while (!this.closed && group.members.length > 0 && group.queue.length > 0) {
      const { event, attempt } = group.queue.shift()!;
      const member = group.members[group.next++ % group.members.length];
      const run = this.deliver(group, member, event, attempt);
      member.running = run;
      await run;
      if (member.running === run) member.running = undefined;
    }
    group.busy = false;
  }

  private deliver(group: Group, member: Member, event: ChangeEvent, attempt: number): Promise<void> {
    // Its failures are logged with the id of the request that caused it.
    return inEventRequest(event, () => this.attempt(group, member, event, attempt));
  }

  private async attempt(group: Group, member: Member, event: ChangeEvent, attempt: number): Promise<void> {
    try {
      await member.handler(copy(event));
    } catch (err) {
      const what = `${event.source}/${event.type} ${event.id}`;
      if (attempt >= this.maxAttempts || this.closed) {
        this.log(`dropping ${what} after ${attempt} failed deliveries`, err);
        return;
      }
      this.log(`handler failed for ${what} (delivery ${attempt}), will retry`, err);
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.enqueue(group, event, attempt + 1);
      }, backoffMs(attempt, this.retryBaseMs, this.retryMaxMs));
      this.timers.add(timer);
    }
  }

  private runBroadcast(b: Broadcast, event: ChangeEvent): void {
    const run = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => (this.broadcasts.has(b) ? b.handler(copy(event)) : undefined))
      .catch((err) => inEventRequest(event, () => this.log(`broadcast handler failed for ${event.source}/${event.type} ${event.id}`, err)))
      .finally(() => b.running.delete(run));
    b.running.add(run);
  }
}

function copy(event: ChangeEvent): ChangeEvent {
  return JSON.parse(JSON.stringify(event)) as ChangeEvent;
}
