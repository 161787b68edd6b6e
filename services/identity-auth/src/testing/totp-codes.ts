import { TOTP_STEP_SECONDS, totpCode } from '../domain/mfa/totp.js';

/**
 * Hands out TOTP codes of one secret, each of another time step (a code is accepted once per
 * identity): steps t-1, t, t+1, t+2 of the step `t` when it was made. All four stay inside the
 * accepted window t-2 … t+2 even when a step boundary passes before the last one is used.
 */
export function totpCodes(secret: string): () => string {
  const stepMs = TOTP_STEP_SECONDS * 1000;
  const base = Math.floor(Date.now() / stepMs);
  let next = base - 1;
  return () => {
    if (next > base + 2) throw new Error('totpCodes: only four distinct codes fit the window');
    return totpCode(secret, next++ * stepMs + stepMs / 2);
  };
}

/** `n` six-digit codes that are none of the secret's codes from t-3 to t+3: certainly wrong for a while. */
export function wrongTotpCodes(secret: string, n: number): string[] {
  const stepMs = TOTP_STEP_SECONDS * 1000;
  const now = Date.now();
  const near = new Set([-3, -2, -1, 0, 1, 2, 3].map((d) => totpCode(secret, now + d * stepMs)));
  const out: string[] = [];
  for (let i = 0; out.length < n; i++) {
    const code = String(i * 7919).padStart(6, '0').slice(-6);
    if (!near.has(code) && !out.includes(code)) out.push(code);
  }
  return out;
}
