import type { ServerResponse } from 'node:http';
import type { RouteDef } from '@ziti/api-contract';
import { ApiError } from '@ziti/errors';
import type { Cache } from '@ziti/messaging';
import { rateLimitRefusals } from '@ziti/metrics';
import { MAX_JSON_DEPTH, jsonNestsDeeperThan } from '@ziti/http-kit';
import { normaliseAddress } from '../http/client-address.js';
import type { ProxiedRequest } from '../http/proxy.js';
import { AdaptiveRateLimiter, type AuthRateLimiterOptions, type LimiterOutcome, type LimiterTicket, authRateLimiterSettings } from './adaptive-limiter.js';
import { AdminClaims, loginClaim } from './admin-claims.js';
import { LoginFailureLimits, type LoginLimitOptions } from './login-failures.js';

/** What {@link createLoginGuard} needs. */
export interface LoginGuardOptions {
  /** The shared cache (Redis, or memory in one process): failed-login counters and new sessions' principals. */
  cache: Cache;
  authRateLimiter?: AuthRateLimiterOptions;
  loginFailureLimits?: LoginLimitOptions;
  log?: (m: string) => void;
  /** Clock in epoch milliseconds (tests). */
  now?: () => number;
}

/** The guard in front of logins and enrollments. */
export interface LoginGuard {
  /**
   * Called when a request is about to go to its context. For `POST /authenticate` and the
   * `/enroll*` operations it refuses (throws 429 `SERVER_TOO_MANY_REQUESTS`) or admits the
   * request and watches its answer; for every other route it answers undefined at once.
   */
  admit(route: RouteDef, req: ProxiedRequest, res: ServerResponse, body: Buffer, search: string): Promise<void> | undefined;
  /**
   * The same for a request passed through to identity-auth's OIDC provider (no route): POSTs to
   * `/oidc/login/*` and `/oidc/oauth/token` ({@link isOidcLogin}) take a ticket of the auth rate
   * limiter; the primary-factor logins (`password`, `username`, `cert`, `ext-jwt`) are also under
   * the failed-login limits. `path` is the collapsed request path. Undefined at once for anything else.
   */
  admitOidc(path: string, req: ProxiedRequest, res: ServerResponse, body: Buffer): Promise<void> | undefined;
  /** The auth rate limiter of this process (undefined when turned off). */
  readonly limiter?: AdaptiveRateLimiter;
}

/** The 429 of a refusal, counted by the limiter that refused (`ziti_rate_limit_refusals_total`). */
const tooManyRequests = (limiter: 'auth-rate' | 'login-failures') => {
  rateLimitRefusals.inc({ context: 'gateway', limiter });
  return ApiError.of('SERVER_TOO_MANY_REQUESTS');
};

const isEnrollment = (route: RouteDef) => route.path === '/enroll' || route.path.startsWith('/enroll/');

/** OIDC provider paths whose POSTs are logins (under the auth rate limiter), and the token endpoint. */
const OIDC_LOGIN_BASE = '/oidc/login/';
const OIDC_TOKEN_PATH = '/oidc/oauth/token';
/** The OIDC primary-factor logins and the method of `POST /authenticate` each is (the failed-login limits apply). */
const OIDC_PRIMARY_LOGINS: ReadonlyMap<string, string> = new Map([
  ['password', 'password'],
  ['username', 'password'],
  ['cert', 'cert'],
  ['ext-jwt', 'ext-jwt'],
]);

/** True for a POST to `/oidc/login/*` or `/oidc/oauth/token` (`path` collapsed; one trailing slash ignored). */
export function isOidcLogin(method: string | undefined, path: string): boolean {
  const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return method === 'POST' && (p === OIDC_TOKEN_PATH || (p.startsWith(OIDC_LOGIN_BASE) && p.length > OIDC_LOGIN_BASE.length));
}

/**
 * OpenZiti: a response that could not be written backs off; success grows; anything else is a
 * failure. The OIDC provider's logins succeed with a redirect (to the callback), so 3xx counts
 * as success there.
 */
function outcomeOf(status: number, delivered: boolean, redirectSucceeds = false): LimiterOutcome {
  if (!delivered || status === 503 || status === 504) return 'backoff';
  return status >= 200 && status < (redirectSucceeds ? 400 : 300) ? 'success' : 'failed';
}

/** Calls `done` once when the response ends: its status (0 before any was sent) and whether it was delivered. */
function onResponseEnd(res: ServerResponse, done: (status: number, delivered: boolean) => void): void {
  let ended = false;
  const end = (delivered: boolean) => {
    if (ended) return;
    ended = true;
    done(res.headersSent ? res.statusCode : 0, delivered);
  };
  // The caller may have gone while the guard awaited the shared cache: its 'close' has been and
  // will not come again, so the end is now (else a limiter ticket taken for it is never released).
  if (res.closed) return end(res.writableFinished);
  res.once('finish', () => end(true));
  res.once('close', () => end(res.writableFinished));
}

/**
 * Runs `hook` when the response is about to end with `status`, and ends it only once the hook is
 * done: a failed login is counted before its caller can see the answer and try again. The hook
 * never rejects (failures are counted best-effort).
 */
function beforeEndWith(res: ServerResponse, status: number, hook: () => Promise<void>): void {
  const end = res.end;
  res.end = function (this: ServerResponse, ...args: unknown[]) {
    res.end = end;
    if (res.statusCode !== status) return end.apply(this, args as Parameters<typeof end>);
    void hook().finally(() => end.apply(this, args as Parameters<typeof end>));
    return this;
  } as typeof res.end;
}

/**
 * The `username` of a password login's JSON body, if it has one. A body nested deeper than bodies
 * may be is not parsed here (identity-auth refuses it): parsing it would cost what the limit saves.
 */
export function usernameOf(body: Buffer): string | undefined {
  if (body.length === 0 || jsonNestsDeeperThan(body, MAX_JSON_DEPTH)) return undefined;
  try {
    const parsed = JSON.parse(body.toString('utf8').replace(/^\uFEFF/, '')) as { username?: unknown } | null;
    return typeof parsed?.username === 'string' ? parsed.username : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The `username` of an OIDC password login's body: a form (`application/x-www-form-urlencoded`)
 * or JSON (anything else, as identity-auth reads it); undefined when it has none.
 */
export function oidcUsernameOf(body: Buffer, contentType: string | undefined): string | undefined {
  if (/^\s*application\/x-www-form-urlencoded\b/i.test(contentType ?? '')) {
    if (body.length === 0) return undefined;
    return new URLSearchParams(body.toString('utf8')).get('username') ?? undefined;
  }
  return usernameOf(body);
}

function queryParam(search: string, name: string): string | undefined {
  return search ? (new URLSearchParams(search).get(name) ?? undefined) : undefined;
}

/**
 * The login and enrollment guard: the failed-login limits (shared through the cache) and the
 * adaptive auth rate limiter (this process), both ahead of identity-auth and pki-enrollment.
 *
 * `POST /authenticate`: refused while its client address or (password) username is at its
 * failed-login limit; then admitted into the limiter's window, or past it by the admin bypass when
 * the credential is one this process learned to be an admin's. Its answer adapts the window,
 * counts a 401 against the counters, and teaches whether a successful claim is an admin's.
 * `/enroll*`: admitted into the same window (no failed-login counting).
 */
export function createLoginGuard(opts: LoginGuardOptions): LoginGuard {
  const now = opts.now ?? Date.now;
  const limiterSettings = authRateLimiterSettings(opts.authRateLimiter);
  const limiter = limiterSettings.enabled ? new AdaptiveRateLimiter(limiterSettings, now) : undefined;
  const failures = new LoginFailureLimits(opts.cache, opts.loginFailureLimits, opts.log, now);
  const admins = new AdminClaims(opts.cache, now);

  async function admitLogin(req: ProxiedRequest, res: ServerResponse, body: Buffer, search: string): Promise<void> {
    const method = queryParam(search, 'method');
    const username = method === 'password' ? usernameOf(body) : undefined;
    return guardLogin(req, res, method, username, false);
  }

  /**
   * A login under the failed-login limits and the auth rate limiter. `oidc`: an OIDC provider
   * login, which succeeds with a redirect and creates no `zt-session`, so it neither uses nor
   * teaches the admin bypass (that is learned from `POST /authenticate`).
   */
  async function guardLogin(req: ProxiedRequest, res: ServerResponse, method: string | undefined, username: string | undefined, oidc: boolean): Promise<void> {
    const address = req.zitiClientAddress ?? normaliseAddress(req.socket.remoteAddress) ?? '';
    const counters = failures.enabled ? failures.counters(address, username) : [];
    if (await failures.throttled(counters)) throw tooManyRequests('login-failures');

    const claim = limiter && !oidc ? loginClaim(method, req, username) : undefined;
    let bypass = false;
    let ticket: LimiterTicket | undefined;
    if (limiter) {
      bypass = claim !== undefined && admins.isAdmin(claim) && limiter.claimAdminBypass();
      if (!bypass && !(ticket = limiter.acquire())) throw tooManyRequests('auth-rate');
    }
    if (counters.length > 0) beforeEndWith(res, 401, () => failures.recordFailure(counters));
    onResponseEnd(res, (status, delivered) => {
      if (ticket) limiter!.release(ticket, outcomeOf(status, delivered, oidc));
      if (bypass) limiter!.endAdminBypass(delivered && status === 200);
      if (status === 200 && claim !== undefined) {
        const token = res.getHeader('zt-session');
        if (typeof token === 'string') void admins.learn(claim, token);
      }
    });
  }

  /** Admits a request into the limiter's window (no failed-login counting), released when its answer ends. */
  function admitTicket(res: ServerResponse, redirectSucceeds: boolean): Promise<void> | undefined {
    if (!limiter) return undefined;
    const ticket = limiter.acquire();
    if (!ticket) return Promise.reject(tooManyRequests('auth-rate'));
    onResponseEnd(res, (status, delivered) => limiter.release(ticket, outcomeOf(status, delivered, redirectSucceeds)));
    return undefined;
  }

  return {
    limiter,
    admit(route, req, res, body, search) {
      if (route.operationId === 'authenticate') return admitLogin(req, res, body, search);
      return isEnrollment(route) ? admitTicket(res, false) : undefined;
    },
    admitOidc(path, req, res, body) {
      if (!isOidcLogin(req.method, path)) return undefined;
      const step = path.replace(/\/$/, '').slice(OIDC_LOGIN_BASE.length);
      const method = path.startsWith(OIDC_LOGIN_BASE) ? OIDC_PRIMARY_LOGINS.get(step) : undefined;
      if (method === undefined) return admitTicket(res, true);
      const username = method === 'password' ? oidcUsernameOf(body, req.headers['content-type']) : undefined;
      return guardLogin(req, res, method, username, true);
    },
  };
}
