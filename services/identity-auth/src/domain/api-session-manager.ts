import { ApiError } from '@ziti/errors';
import type { ApiSessionView, ListRequest, Page } from './model.js';
import { isDisabled } from './model.js';
import type { PrincipalCache, UnitOfWork } from './ports.js';
import { type Expiry, expiryOf, isExpired } from './session-time.js';

/** The caller as every service sees it (mirrors proto `ziti.v1.Principal`). */
export interface ResolvedPrincipal {
  identityId: string;
  identityName: string;
  apiSessionId: string;
  isAdmin: boolean;
  isDefaultAdmin: boolean;
  isFullyAuthenticated: boolean;
  permissions: string[];
  configTypes: string[];
  authenticatorId: string;
  expiresAt: string;
  expirationSeconds: number;
  identityTypeId: string;
}

export interface Resolution {
  principal: ResolvedPrincipal;
  /** How long a gateway may cache the principal: at most 30 s, never past the session's expiry. */
  cacheTtlSeconds: number;
}

/** A session's `lastActivityAt` is written again only when older than this. */
export const TOUCH_AFTER_MS = 10_000;
export const MAX_CACHE_TTL_SECONDS = 30;

/** 401 for an unknown, expired or disabled session token (§3.4). */
export function invalidSessionToken(): ApiError {
  return ApiError.of('UNAUTHORIZED', {
    headers: { 'WWW-Authenticate': 'zt-session realm="zt-session" error="invalid" error_description="token is invalid"' },
  });
}

/** Collects sessions whose activity must slide, and writes them in one statement per tick. */
export class ActivityRecorder {
  private pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly uow: UnitOfWork,
    private readonly intervalMs = 1000,
    private readonly log: (msg: string) => void = () => undefined,
  ) {}

  record(apiSessionId: string): void {
    this.pending.add(apiSessionId);
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.intervalMs);
      this.timer.unref();
    }
  }

  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const ids = [...this.pending];
    this.pending.clear();
    if (ids.length === 0) return this.flushing;
    this.flushing = this.flushing
      .then(() => this.uow.repos.apiSessions.touch(ids, new Date()))
      .catch((err: unknown) => this.log(`identity-auth: recording API session activity failed: ${(err as Error).message}`));
    return this.flushing;
  }
}

/** API sessions: the caller's own, the management views, logout/delete, and token resolution. */
export class ApiSessionManager {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly cache: PrincipalCache,
    private readonly activity: ActivityRecorder,
    readonly timeoutMs: number,
  ) {}

  expiry(session: { lastActivityAt: Date }, now = new Date()): Expiry {
    return expiryOf(session.lastActivityAt, this.timeoutMs, now);
  }

  /** The caller's session; a session deleted since the principal was signed is 401. */
  async current(apiSessionId: string): Promise<ApiSessionView> {
    const view = await this.uow.repos.apiSessions.view(apiSessionId);
    if (!view) throw invalidSessionToken();
    return view;
  }

  list(req: ListRequest): Promise<Page<ApiSessionView>> {
    return this.uow.repos.apiSessions.list(req);
  }

  async detail(id: string): Promise<ApiSessionView> {
    const view = await this.uow.repos.apiSessions.view(id);
    if (!view) throw ApiError.notFound();
    return view;
  }

  /** Deletes a session; its token stops working at once (cache entry dropped after commit). */
  async delete(id: string): Promise<void> {
    const deleted = await this.uow.run(async (tx) => {
      const session = await tx.apiSessions.delete(id);
      if (!session) throw ApiError.notFound();
      await tx.emit({ type: 'api-session.deleted', apiSessionId: session.id, identityId: session.identityId, tokens: [session.token] });
      return session;
    });
    await this.cache.drop([deleted.token]);
  }

  /** Logout: like delete, but a session already gone is not an error. */
  async logout(apiSessionId: string): Promise<void> {
    await this.delete(apiSessionId).catch((err: unknown) => {
      if (!(err instanceof ApiError && err.code === 'NOT_FOUND')) throw err;
    });
  }

  /**
   * Resolves a `zt-session` token for the gateway: unknown, idle past the timeout, or of a
   * disabled identity → 401 with the invalid-token challenge. Slides the expiry.
   */
  async resolve(token: string): Promise<Resolution> {
    if (!token) throw invalidSessionToken();
    const session = await this.uow.repos.apiSessions.findByTokenWithIdentity(token);
    const now = new Date();
    if (!session || isExpired(session.lastActivityAt, this.timeoutMs, now) || isDisabled(session.identity, now)) {
      throw invalidSessionToken();
    }
    let lastActivityAt = session.lastActivityAt;
    if (now.getTime() - lastActivityAt.getTime() > TOUCH_AFTER_MS) {
      this.activity.record(session.id);
      lastActivityAt = now;
    }
    const { expiresAt, expirationSeconds } = expiryOf(lastActivityAt, this.timeoutMs, now);
    const identity = session.identity;
    return {
      principal: {
        identityId: identity.id,
        identityName: identity.name,
        apiSessionId: session.id,
        isAdmin: identity.isAdmin,
        isDefaultAdmin: identity.isDefaultAdmin,
        isFullyAuthenticated: !session.isMfaRequired || session.isMfaComplete,
        permissions: identity.permissions,
        configTypes: session.configTypes,
        authenticatorId: session.authenticatorId,
        expiresAt: expiresAt.toISOString(),
        expirationSeconds,
        identityTypeId: identity.typeId,
      },
      cacheTtlSeconds: Math.max(1, Math.min(MAX_CACHE_TTL_SECONDS, expirationSeconds)),
    };
  }

  /** Deletes sessions idle past the timeout (the controller's session enforcer). Returns how many. */
  async sweepIdle(batch = 500): Promise<number> {
    let total = 0;
    for (;;) {
      const cutoff = new Date(Date.now() - this.timeoutMs);
      const deleted = await this.uow.run(async (tx) => {
        const sessions = await tx.apiSessions.deleteIdleBefore(cutoff, batch);
        await tx.emit(
          ...sessions.map((s) => ({ type: 'api-session.deleted' as const, apiSessionId: s.id, identityId: s.identityId, tokens: [s.token] })),
        );
        return sessions;
      });
      await this.cache.drop(deleted.map((s) => s.token));
      total += deleted.length;
      if (deleted.length < batch) return total;
    }
  }
}
