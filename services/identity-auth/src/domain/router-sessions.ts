import { ApiError } from '@ziti/errors';
import { isStorableText } from '@ziti/http-kit';

/** A fully authenticated legacy API session as routers need it (the router control plane). */
export interface LegacySession {
  id: string;
  /** The raw `zt-session` token: routers look SDK connections up by it. */
  token: string;
  identityId: string;
  /** Lowercase hex SHA-1 of the identity's certificate authenticators. */
  certFingerprints: string[];
}

/** Reads and the activity mark of legacy sessions for the router control plane. */
export interface LegacySessionStore {
  /** These sessions (ids given), when legacy, fully authenticated and active since `activeSince`; in id order. */
  listByIds(ids: readonly string[], activeSince: Date): Promise<LegacySession[]>;
  /** The next `limit` such sessions after `afterId` (all when empty), in id order. */
  listAfter(afterId: string, limit: number, activeSince: Date): Promise<LegacySession[]>;
  /**
   * Sets the last activity of the legacy sessions with these tokens that are still active (since
   * `activeSince`) to `at`, in one statement; returns the matched ones.
   */
  touchByTokens(tokens: readonly string[], activeSince: Date, at: Date): Promise<{ token: string; identityId: string }[]>;
}

/** The most ids one `ListLegacyApiSessions` call may name, and the largest page. */
export const MAX_LEGACY_SESSIONS_PER_CALL = 1000;
/** The most tokens one `TouchApiSessions` call may carry (a router's heartbeat names the tokens in use). */
export const MAX_TOUCHED_TOKENS = 10_000;
/** Longest token accepted (legacy tokens are UUIDs; anything longer matches nothing anyway). */
const MAX_TOKEN_LENGTH = 256;

const distinct = (values: readonly string[]) => [...new Set(values.filter((v) => typeof v === 'string' && v.length > 0))];
/** Text PostgreSQL can hold: anything else names no session. */
const lookable = (v: string) => v.length <= MAX_TOKEN_LENGTH && isStorableText(v);

/**
 * Legacy (`zt-session`) API sessions for the router control plane (the fabric context): routers
 * resolve an SDK's token locally, from the sessions the controller pushed them, and report the
 * tokens in use so the sessions do not idle out. A session counts while it is fully authenticated
 * (no TOTP pending) and not idle past the timeout.
 */
export class RouterSessions {
  constructor(
    private readonly store: LegacySessionStore,
    private readonly timeoutMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  private activeSince(): Date {
    return new Date(this.now() - this.timeoutMs);
  }

  /**
   * The sessions `ids` names (unknown, partial or idle ones left out), or else a page of every one
   * after `afterId`; `nextAfterId` is empty on the last page. More than 1000 ids: 400 on `ids`.
   */
  async list(ids: readonly string[], afterId: string, limit: number): Promise<{ sessions: LegacySession[]; nextAfterId: string }> {
    const wanted = distinct(ids);
    if (wanted.length > MAX_LEGACY_SESSIONS_PER_CALL) throw ApiError.field('ids', `at most ${MAX_LEGACY_SESSIONS_PER_CALL} ids per call`, wanted.length);
    if (wanted.length > 0) {
      const known = wanted.filter(lookable);
      return { sessions: known.length > 0 ? await this.store.listByIds(known, this.activeSince()) : [], nextAfterId: '' };
    }
    if (afterId && !lookable(afterId)) throw ApiError.field('afterId', 'not an API session id', afterId);
    const size = limit > 0 ? Math.min(limit, MAX_LEGACY_SESSIONS_PER_CALL) : MAX_LEGACY_SESSIONS_PER_CALL;
    const sessions = await this.store.listAfter(afterId ?? '', size, this.activeSince());
    return { sessions, nextAfterId: sessions.length === size ? sessions[sessions.length - 1]!.id : '' };
  }

  /**
   * A router's heartbeat: marks the last activity of the active legacy sessions of these tokens;
   * answers the tokens that match none (the router drops them) and the matched identities.
   */
  async touch(tokens: readonly string[]): Promise<{ unknownTokens: string[]; identityIds: string[] }> {
    const given = distinct(tokens);
    if (given.length > MAX_TOUCHED_TOKENS) throw ApiError.field('tokens', `at most ${MAX_TOUCHED_TOKENS} tokens per call`, given.length);
    const known = given.filter(lookable);
    const matched = known.length > 0 ? await this.store.touchByTokens(known, this.activeSince(), new Date(this.now())) : [];
    const found = new Set(matched.map((m) => m.token));
    return { unknownTokens: given.filter((t) => !found.has(t)), identityIds: distinct(matched.map((m) => m.identityId)) };
  }
}
