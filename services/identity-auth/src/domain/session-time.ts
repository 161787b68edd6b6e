/** Sliding API-session lifetime (§2.3) and the clock formats the wire needs. */

export const DEFAULT_SESSION_TIMEOUT_MINUTES = 30;

/** `edge.api.sessionTimeout`: default 30 min; below 1 min falls back to 30 min. */
export function sessionTimeoutMs(minutes: number | undefined): number {
  const m = minutes === undefined || !Number.isFinite(minutes) || minutes < 1 ? DEFAULT_SESSION_TIMEOUT_MINUTES : minutes;
  return m * 60_000;
}

export interface Expiry {
  expiresAt: Date;
  /** Whole seconds left (never negative). */
  expirationSeconds: number;
}

export function expiryOf(lastActivityAt: Date, timeoutMs: number, now = new Date()): Expiry {
  const expiresAt = new Date(lastActivityAt.getTime() + timeoutMs);
  return { expiresAt, expirationSeconds: Math.max(0, Math.floor((expiresAt.getTime() - now.getTime()) / 1000)) };
}

export function isExpired(lastActivityAt: Date, timeoutMs: number, now = new Date()): boolean {
  return lastActivityAt.getTime() + timeoutMs <= now.getTime();
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/**
 * Go's `time.Time.String()` of a UTC time, as the controller writes the `expires-at` header:
 * `2026-01-02 15:04:05.123 +0000 UTC` (fraction trimmed of trailing zeros, omitted when zero).
 */
export function goTimeString(d: Date): string {
  const ms = d.getUTCMilliseconds();
  const frac = ms === 0 ? '' : `.${pad(ms, 3).replace(/0+$/, '')}`;
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${frac} +0000 UTC`
  );
}
