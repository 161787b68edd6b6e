import { ApiError } from '@ziti/errors';
import type { MfaGuardStore } from '../ports.js';
import { TOTP_SKEW_STEPS, TOTP_STEP_SECONDS, totpSteps } from './totp.js';

/** Wrong codes an API session may send; the next code it sends is refused, even a right one. */
export const MFA_MAX_FAILURES = 10;

/**
 * How long after its creation an API session may complete MFA with `POST /authenticate/mfa`
 * (24 h). It bounds the life of the session's failure counter: the counter starts at the
 * session's first code, so it lives at least until the session can no longer complete MFA.
 */
export const MFA_COMPLETION_WINDOW_SECONDS = 24 * 60 * 60;

/**
 * How long an accepted time step stays claimed: a step is accepted during the 5 steps of the
 * window (150 s) on any one clock, and the claim is made at the earliest inside that span; 60 s
 * more cover replicas whose clocks differ by up to a minute.
 */
export const TOTP_CLAIM_TTL_SECONDS = (2 * TOTP_SKEW_STEPS + 1) * TOTP_STEP_SECONDS + 60;

/**
 * The rules every endpoint that accepts an MFA code follows, on every replica (the state is in
 * the shared cache):
 * - a TOTP code is accepted once per identity (RFC 6238 §5.2, ASVS 2.8.4): its time step is
 *   claimed atomically (`setIfAbsent`), so of two requests with the same code exactly one wins, and
 *   the other is refused as a wrong code; other steps of the window stay usable;
 * - an API session may send at most {@link MFA_MAX_FAILURES} wrong codes: each code reserves an
 *   attempt first (`increment`), so concurrent guesses cannot overshoot, and an accepted code
 *   clears the count. The counter lives {@link MFA_COMPLETION_WINDOW_SECONDS}.
 */
export class MfaGuard {
  constructor(private readonly store: MfaGuardStore) {}

  /** Reserves one code check for the session; 400 MFA_INVALID_TOKEN once its wrong codes are used up. */
  async admit(apiSessionId: string): Promise<void> {
    const attempts = await this.store.countAttempt(apiSessionId, MFA_COMPLETION_WINDOW_SECONDS);
    if (attempts > MFA_MAX_FAILURES) throw ApiError.of('MFA_INVALID_TOKEN');
  }

  /** The session's code was accepted: its failures start over. */
  async accepted(apiSessionId: string): Promise<void> {
    await this.store.clearAttempts(apiSessionId);
  }

  /**
   * Whether `code` is a TOTP of the secret now that the identity has not used before; claims its
   * time step (both, in the rare case that two steps of the window share the code).
   */
  async acceptTotp(identityId: string, secret: string, code: string, at = Date.now()): Promise<boolean> {
    const steps = totpSteps(secret, code, at);
    if (steps.length === 0) return false;
    let fresh = true;
    for (const step of steps) fresh = (await this.store.claimStep(identityId, step, TOTP_CLAIM_TTL_SECONDS)) && fresh;
    return fresh;
  }
}
