import type { LegacyApiSession } from '@ziti/proto';
import type { ChangeEvent, EventBus, Subscription } from '@ziti/messaging';
import { type Peers, allLegacyApiSessions, apiSessionCertFingerprints } from '../grpc/peers.js';

/** Where legacy API-session pushes go: every edge router whose sync is done. */
export interface LegacySessionSink {
  added(sessions: LegacyApiSession[], fullState: boolean): void;
  updated(sessions: LegacyApiSession[]): void;
  removed(sessions: { id: string; token: string }[]): void;
}

/** pki-enrollment's events about an API session's own certificates (ids only). */
export const SESSION_CERT_EVENTS = ['api-session-certificate.created', 'api-session-certificate.deleted'];

const MAX_ID_LENGTH = 128;

const ids = (e: ChangeEvent): string[] => {
  const d = e.data as Record<string, unknown>;
  const one = typeof d.apiSessionId === 'string' ? [d.apiSessionId] : typeof d.id === 'string' ? [d.id] : [];
  const many = Array.isArray(d.ids) ? d.ids.filter((x): x is string => typeof x === 'string') : [];
  return [...new Set([...one, ...many])].filter((x) => x.length > 0 && x.length <= MAX_ID_LENGTH);
};

/** A session as identity-auth answered it, its own certificates' fingerprints, and what routers were told. */
interface Known {
  base: LegacyApiSession;
  certs: string[];
  pushed: LegacyApiSession;
}

const merged = (base: LegacyApiSession, certs: readonly string[]): LegacyApiSession => ({
  ...base,
  certFingerprints: [...new Set([...base.certFingerprints, ...certs])],
});
const samePrints = (a: LegacyApiSession, b: LegacyApiSession) => a.certFingerprints.join(',') === b.certFingerprints.join(',');

/**
 * The legacy (zt-session) API sessions routers must know, with their raw tokens: read from
 * identity-auth over the internal gRPC (never from the bus, which carries ids only), kept in this
 * replica's memory, pushed to edge routers (OpenZiti ApiSessionAdded / Updated / Removed). The
 * fingerprints pushed are the identity's certificate authenticators (identity-auth) and the
 * session's own certificates (pki-enrollment), as OpenZiti's `ApiSession.CertFingerprints`.
 * Events say which ids changed (identity-auth `api-session.*`, pki-enrollment
 * `api-session-certificate.*`); a periodic reload converges anything an event missed. Reloads and
 * events are applied one at a time, so none applies an answer older than another's.
 */
export class LegacySessions {
  private readonly byId = new Map<string, Known>();
  private readonly byToken = new Map<string, LegacyApiSession>();
  private readonly subscriptions: Subscription[] = [];
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly peers: Peers,
    private readonly sink: LegacySessionSink,
    private readonly problem: (m: string, err?: unknown) => void,
  ) {}

  async start(bus: EventBus): Promise<void> {
    await this.reload();
    const apply = (e: ChangeEvent, fn: (e: ChangeEvent) => Promise<void>) =>
      this.serial(() => fn(e)).catch((err) => this.problem(`fabric: API session ${e.type} not applied`, err));
    this.subscriptions.push(
      await bus.subscribeBroadcast('identity-auth', ['api-session.created', 'api-session.updated', 'api-session.deleted'], (e) => apply(e, (x) => this.onEvent(x))),
      await bus.subscribeBroadcast('pki-enrollment', SESSION_CERT_EVENTS, (e) => apply(e, (x) => this.onCertEvent(x))),
    );
  }

  async stop(): Promise<void> {
    await Promise.all(this.subscriptions.map((s) => s.stop()));
  }

  all(): LegacyApiSession[] {
    return [...this.byId.values()].map((k) => k.pushed);
  }

  byTokenValue(token: string): LegacyApiSession | undefined {
    return this.byToken.get(token);
  }

  /** Reloads every session and pushes what differs from what routers were told. */
  reload(): Promise<void> {
    return this.serial(async () => {
      const fresh = await allLegacyApiSessions(this.peers);
      const certs = await this.certsOf(fresh.map((s) => s.id));
      const seen = new Set<string>();
      const added: LegacyApiSession[] = [];
      const updated: LegacyApiSession[] = [];
      for (const s of fresh) {
        seen.add(s.id);
        const old = this.byId.get(s.id);
        const next = this.remember(s, certs?.get(s.id) ?? (certs ? [] : old?.certs ?? []));
        if (!old) added.push(next);
        else if (!samePrints(old.pushed, next)) updated.push(next);
      }
      const removed = [...this.byId.values()].filter((k) => !seen.has(k.base.id)).map((k) => k.pushed);
      for (const s of removed) this.forget(s);
      if (added.length) this.sink.added(added, false);
      if (updated.length) this.sink.updated(updated);
      if (removed.length) this.sink.removed(removed);
    });
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /**
   * The session certificates' fingerprints of these sessions, by id; undefined (logged) when
   * pki-enrollment does not answer: the caller keeps what it knew, the next reload converges.
   */
  private async certsOf(sessionIds: string[]): Promise<Map<string, string[]> | undefined> {
    if (sessionIds.length === 0) return new Map();
    try {
      return await apiSessionCertFingerprints(this.peers, sessionIds);
    } catch (err) {
      this.problem('fabric: API-session certificate fingerprints not read; sessions pushed with those known', err);
      return undefined;
    }
  }

  private async onEvent(e: ChangeEvent): Promise<void> {
    const changed = ids(e);
    if (changed.length === 0) return;
    if (e.type === 'api-session.deleted') {
      const gone = changed.map((id) => this.byId.get(id)?.pushed).filter((s): s is LegacyApiSession => s !== undefined);
      for (const s of gone) this.forget(s);
      if (gone.length) this.sink.removed(gone);
      return;
    }
    const found = (await this.peers.listLegacyApiSessions({ ids: changed })).apiSessions;
    const certs = await this.certsOf(found.map((s) => s.id));
    const added: LegacyApiSession[] = [];
    const updated: LegacyApiSession[] = [];
    for (const s of found) {
      const old = this.byId.get(s.id);
      const next = this.remember(s, certs?.get(s.id) ?? (certs ? [] : old?.certs ?? []));
      (old ? updated : added).push(next);
    }
    if (added.length) this.sink.added(added, false);
    if (updated.length) this.sink.updated(updated);
  }

  /** A certificate of a session was created or deleted: routers get the session's new fingerprints. */
  private async onCertEvent(e: ChangeEvent): Promise<void> {
    const id = (e.data as { apiSessionId?: unknown }).apiSessionId;
    // A session not pushed (yet) gets its certificates with its own push.
    const old = typeof id === 'string' ? this.byId.get(id) : undefined;
    if (!old) return;
    const certs = await apiSessionCertFingerprints(this.peers, [old.base.id]);
    const next = this.remember(old.base, certs.get(old.base.id) ?? []);
    if (!samePrints(old.pushed, next)) this.sink.updated([next]);
  }

  private remember(base: LegacyApiSession, certs: string[]): LegacyApiSession {
    const old = this.byId.get(base.id);
    if (old && old.pushed.token !== base.token) this.byToken.delete(old.pushed.token);
    const pushed = merged(base, certs);
    this.byId.set(base.id, { base, certs, pushed });
    this.byToken.set(pushed.token, pushed);
    return pushed;
  }

  private forget(s: { id: string; token: string }): void {
    this.byId.delete(s.id);
    this.byToken.delete(s.token);
  }
}
