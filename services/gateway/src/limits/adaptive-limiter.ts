/**
 * OpenZiti's adaptive auth rate limiter (`controller/command/rate_limiter.go`,
 * `adaptiveRateLimiter`, configured as `edge.api.authRateLimiter`), for this process.
 *
 * It bounds how many logins and enrollments are outstanding at once by a window that starts at
 * `maxSize` and moves between `minSize` and `maxSize`:
 * - a request is admitted when its position (outstanding ones, itself included) is within the
 *   window; otherwise it is refused (429 `SERVER_TOO_MANY_REQUESTS`);
 * - every 10th success grows the window by one (successes are not counted at the maximum);
 * - a backoff (the answer could not be delivered: the client was gone or the work timed out)
 *   shrinks the window to the backed-off request's position minus 10, when that is smaller, but
 *   never below `minSize`;
 * - any other outcome (the work failed: wrong credentials, a refused enrollment) changes nothing.
 *
 * The state lives in this process: the limiter protects this process's CPU and its upstream, so
 * every gateway replica has its own window.
 */

/** Settings of the limiter (OpenZiti `authRateLimiter`: enabled, minSize, maxSize). */
export interface AuthRateLimiterOptions {
  /** Default true. */
  enabled?: boolean;
  /** Smallest window; default 5, at least 5 (OpenZiti's bounds: 5..1000). */
  minSize?: number;
  /** Largest window, and the one it starts with; default 250, at most 1000. */
  maxSize?: number;
}

export const AUTH_RATE_LIMITER_DEFAULTS = { enabled: true, minSize: 5, maxSize: 250 } as const;
/** The bounds OpenZiti accepts for both sizes. */
export const AUTH_RATE_LIMITER_BOUNDS = { min: 5, max: 1000 } as const;
/** One admin login per this interval skips the window (OpenZiti's `lastAdminAuth` check). */
export const ADMIN_BYPASS_INTERVAL_MS = 10_000;
/** Successes per window growth step. */
const GROWTH_INTERVAL = 10;
/** How far below a backed-off request's position the window drops. */
const BACKOFF_MARGIN = 10;

/** An admitted request's place in the window. */
export interface LimiterTicket {
  readonly position: number;
}

/** How an admitted request ended. */
export type LimiterOutcome = 'success' | 'backoff' | 'failed';

/** Validates limiter settings, naming the offending one; answers them with the defaults applied. */
export function authRateLimiterSettings(opts: AuthRateLimiterOptions = {}): Required<AuthRateLimiterOptions> {
  const s = { ...AUTH_RATE_LIMITER_DEFAULTS, ...definedOnly(opts) };
  const { min, max } = AUTH_RATE_LIMITER_BOUNDS;
  for (const key of ['minSize', 'maxSize'] as const) {
    if (!Number.isInteger(s[key]) || s[key] < min || s[key] > max) throw new Error(`authRateLimiter.${key} must be an integer in ${min}..${max}, got ${s[key]}`);
  }
  if (s.minSize > s.maxSize) throw new Error(`authRateLimiter.minSize (${s.minSize}) must not exceed maxSize (${s.maxSize})`);
  return s;
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export class AdaptiveRateLimiter {
  private window: number;
  private outstanding = 0;
  private successes = 0;
  private lastAdminAuth = Number.NEGATIVE_INFINITY;
  private bypassPending = false;
  private readonly min: number;
  private readonly max: number;

  constructor(opts: AuthRateLimiterOptions = {}, private readonly now: () => number = Date.now) {
    const s = authRateLimiterSettings(opts);
    this.min = s.minSize;
    this.max = s.maxSize;
    this.window = this.max;
  }

  /** The current window size. */
  get windowSize(): number {
    return this.window;
  }

  /** Requests admitted and not yet released. */
  get inFlight(): number {
    return this.outstanding;
  }

  /** Admits a request when its position is within the window; undefined means refuse it. */
  acquire(): LimiterTicket | undefined {
    const position = this.outstanding + 1;
    if (position > this.window) return undefined;
    this.outstanding = position;
    return { position };
  }

  /** Ends an admitted request (exactly once per ticket) and adapts the window to its outcome. */
  release(ticket: LimiterTicket, outcome: LimiterOutcome): void {
    this.outstanding = Math.max(0, this.outstanding - 1);
    if (outcome === 'success') {
      if (this.window >= this.max) return;
      if (++this.successes % GROWTH_INTERVAL === 0) this.window = Math.min(this.window + 1, this.max);
    } else if (outcome === 'backoff') {
      if (this.window <= this.min) return;
      const next = ticket.position - BACKOFF_MARGIN;
      if (next < this.window) this.window = Math.max(next, this.min);
    }
  }

  /**
   * True when an admin's login may skip the window now: no admin login took the bypass in the
   * last {@link ADMIN_BYPASS_INTERVAL_MS} and no other claim of it is pending. The caller ends the
   * claim with {@link endAdminBypass}; only a successful admin login uses the interval up.
   */
  claimAdminBypass(): boolean {
    if (this.bypassPending || this.now() - this.lastAdminAuth <= ADMIN_BYPASS_INTERVAL_MS) return false;
    this.bypassPending = true;
    return true;
  }

  /** Ends a claim of {@link claimAdminBypass}: `succeeded` when it proved to be an admin's login. */
  endAdminBypass(succeeded: boolean): void {
    this.bypassPending = false;
    if (succeeded) this.lastAdminAuth = this.now();
  }
}
