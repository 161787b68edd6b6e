import type { LegacyApiSession } from '@ziti/proto';
import type { ChangeEvent, EventBus, Subscription } from '@ziti/messaging';
import { type Peers, allLegacyApiSessions } from '../grpc/peers.js';

/** Where legacy API-session pushes go: every edge router whose sync is done. */
export interface LegacySessionSink {
  added(sessions: LegacyApiSession[], fullState: boolean): void;
  updated(sessions: LegacyApiSession[]): void;
  removed(sessions: { id: string; token: string }[]): void;
}

const ids = (e: ChangeEvent): string[] => {
  const d = e.data as Record<string, unknown>;
  const one = typeof d.apiSessionId === 'string' ? [d.apiSessionId] : typeof d.id === 'string' ? [d.id] : [];
  const many = Array.isArray(d.ids) ? d.ids.filter((x): x is string => typeof x === 'string') : [];
  return [...new Set([...one, ...many])].filter((x) => x.length > 0 && x.length <= 128);
};

/**
 * The legacy (zt-session) API sessions routers must know, with their raw tokens: read from
 * identity-auth over the internal gRPC (never from the bus, which carries ids only), kept in this
 * replica's memory, pushed to edge routers (OpenZiti ApiSessionAdded / Updated / Removed). Events
 * say which ids changed; a periodic reload converges anything an event missed.
 */
export class LegacySessions {
  private readonly byId = new Map<string, LegacyApiSession>();
  private readonly byToken = new Map<string, LegacyApiSession>();
  private subscription: Subscription | undefined;

  constructor(
    private readonly peers: Peers,
    private readonly sink: LegacySessionSink,
    private readonly problem: (m: string, err?: unknown) => void,
  ) {}

  async start(bus: EventBus): Promise<void> {
    await this.reload();
    this.subscription = await bus.subscribeBroadcast('identity-auth', ['api-session.created', 'api-session.updated', 'api-session.deleted'], async (e) => {
      try {
        await this.onEvent(e);
      } catch (err) {
        this.problem(`fabric: API session ${e.type} not applied`, err);
      }
    });
  }

  async stop(): Promise<void> {
    await this.subscription?.stop();
  }

  all(): LegacyApiSession[] {
    return [...this.byId.values()];
  }

  byTokenValue(token: string): LegacyApiSession | undefined {
    return this.byToken.get(token);
  }

  /** Reloads every session and pushes what differs from what routers were told. */
  async reload(): Promise<void> {
    const fresh = await allLegacyApiSessions(this.peers);
    const seen = new Set<string>();
    const added: LegacyApiSession[] = [];
    const updated: LegacyApiSession[] = [];
    for (const s of fresh) {
      seen.add(s.id);
      const old = this.byId.get(s.id);
      if (!old) added.push(s);
      else if (old.certFingerprints.join(',') !== s.certFingerprints.join(',')) updated.push(s);
      this.remember(s);
    }
    const removed = [...this.byId.values()].filter((s) => !seen.has(s.id));
    for (const s of removed) this.forget(s);
    if (added.length) this.sink.added(added, false);
    if (updated.length) this.sink.updated(updated);
    if (removed.length) this.sink.removed(removed);
  }

  private async onEvent(e: ChangeEvent): Promise<void> {
    const changed = ids(e);
    if (changed.length === 0) return;
    if (e.type === 'api-session.deleted') {
      const gone = changed.map((id) => this.byId.get(id)).filter((s): s is LegacyApiSession => s !== undefined);
      for (const s of gone) this.forget(s);
      if (gone.length) this.sink.removed(gone);
      return;
    }
    const found = (await this.peers.listLegacyApiSessions({ ids: changed })).apiSessions;
    const added = found.filter((s) => !this.byId.has(s.id));
    const updated = found.filter((s) => this.byId.has(s.id));
    for (const s of found) this.remember(s);
    if (added.length) this.sink.added(added, false);
    if (updated.length) this.sink.updated(updated);
  }

  private remember(s: LegacyApiSession): void {
    const old = this.byId.get(s.id);
    if (old && old.token !== s.token) this.byToken.delete(old.token);
    this.byId.set(s.id, s);
    this.byToken.set(s.token, s);
  }

  private forget(s: LegacyApiSession): void {
    this.byId.delete(s.id);
    this.byToken.delete(s.token);
  }
}
