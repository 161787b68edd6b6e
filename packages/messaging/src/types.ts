/**
 * A change event, as published on the bus after its transaction committed (transactional outbox).
 *
 * Example (identity-auth deleting an API session):
 * ```json
 * { "id": "6f1c…-uuid", "type": "api-session.deleted", "source": "identity-auth",
 *   "occurredAt": "2026-11-21T10:00:00.000Z",
 *   "data": { "apiSessionId": "Xy3.kLm9-", "identityId": "a1b2c3d4e", "token": "uuid" },
 *   "requestId": "Qw7rT2x.z" }
 * ```
 * Subject on NATS: `ziti.events.<source>.<type>`, e.g. `ziti.events.identity-auth.api-session.deleted`.
 */
export interface ChangeEvent<T = Record<string, unknown>> {
  /** Unique id; the bus deduplicates on it and consumers must be idempotent on it. */
  id: string;
  type: string;
  source: string;
  occurredAt: string;
  data: T;
  /**
   * The id of the request that caused the change, when one did (absent for background work). Left
   * out of the JSON when unknown, so consumers that predate it see the same events; consumers log
   * with it, so one request can be followed into every context its change reached.
   */
  requestId?: string;
}

export type EventHandler = (event: ChangeEvent) => Promise<void> | void;

export interface Subscription {
  stop(): Promise<void>;
}

/** The event bus: NATS JetStream in production, in-process in the embedded default. */
export interface EventBus {
  /** Publishes one event; resolves once the bus has stored it. Deduplicated by `event.id`. */
  publish(event: ChangeEvent): Promise<void>;
  /**
   * Durable, load-balanced consumption: every event of the matching types is handled once by one
   * replica of the named consumer group, and redelivered if the handler throws.
   * `types` are event types with `*` / `>` wildcards in NATS style, e.g. `identity.*`.
   */
  subscribeDurable(group: string, source: string | '*', types: string[], handler: EventHandler): Promise<Subscription>;
  /**
   * Fan-out consumption: every replica that subscribes receives every new event (no replay of
   * older ones). Used by gateways to drop cached principals.
   */
  subscribeBroadcast(source: string | '*', types: string[], handler: EventHandler): Promise<Subscription>;
  /**
   * Best-effort fan-out of a record to outside listeners, never redelivered: on NATS a plain
   * (core) publish of `record` as JSON on `<prefix>.<name>` (one token: outside the `<prefix>.*.>`
   * of a stream this version created, and `nats sub '<prefix>.*'` sees only these records).
   * Returns at once; a failure is logged. The in-process bus has no outside listeners: it drops it.
   */
  publishRecord(name: string, record: object): void;
  /**
   * Calls `listener(false)` when a networked bus loses its server and `listener(true)` once it is
   * back; returns the unsubscribe. While it is away `publish` fails at once (code
   * `BUS_UNAVAILABLE`) instead of waiting for a timeout. Absent on a bus that cannot disconnect.
   */
  onConnectionChange?(listener: (connected: boolean) => void): () => void;
  close(): Promise<void>;
}

/** A shared cache: Redis in production, in-memory in the embedded default. Values are strings. */
export interface Cache {
  get(key: string): Promise<string | null>;
  /**
   * The values of `keys`, in order (null for each absent one), in one round trip (Redis `MGET`).
   * Always read from the shared cache itself, never from a near copy: what must be seen fresh on
   * every request (revocation markers) is read here. No keys: `[]`.
   */
  mget(keys: readonly string[]): Promise<(string | null)[]>;
  set(key: string, value: string, ttlSeconds: number): Promise<void>;
  /**
   * Sets `key` only when it holds nothing (Redis `SET NX PX`); true when this call set it. What
   * every replica must agree on happened once (a TOTP code used, a run started) is claimed here.
   */
  setIfAbsent(key: string, value: string, ttlSeconds: number): Promise<boolean>;
  /**
   * Adds one to the counter at `key` and answers the new count, atomically on every replica. The
   * first increment of a key gives it `ttlSeconds`; later ones leave its expiry alone (a fixed
   * window: the count resets when the first increment's window ends).
   */
  increment(key: string, ttlSeconds: number): Promise<number>;
  del(...keys: string[]): Promise<void>;
  close(): Promise<void>;
}
