import { ApiError } from '@ziti/errors';
import type { Cache } from '@ziti/messaging';
import type { MfaGuardStore } from '../domain/ports.js';

/** `ziti:mfa:step:<identityId>:<step>`: a TOTP time step the identity used (value `1`). */
export const totpStepKey = (identityId: string, step: number): string => `ziti:mfa:step:${identityId}:${step}`;
/** `ziti:mfa:attempts:<apiSessionId>`: codes the session sent since its last accepted one. */
export const mfaAttemptsKey = (apiSessionId: string): string => `ziti:mfa:attempts:${apiSessionId}`;

/** The cache did not answer: 503, and the code is not accepted. */
function unavailable(err: unknown): ApiError {
  return ApiError.of('TIMEOUT', { cause: { code: 'UNHANDLED', message: `shared cache: ${(err as Error).message}` } });
}

/**
 * The MFA guard's state in the shared cache (Redis on every replica; the in-memory cache in one
 * process): claims with `setIfAbsent`, counts with `increment`. A claim or a count that fails
 * fails the request (503 TIMEOUT); clearing a count only logs (the code was accepted already).
 */
export function cacheMfaGuardStore(cache: Cache, log: (msg: string) => void): MfaGuardStore {
  return {
    async claimStep(identityId, step, ttlSeconds) {
      try {
        return await cache.setIfAbsent(totpStepKey(identityId, step), '1', ttlSeconds);
      } catch (err) {
        throw unavailable(err);
      }
    },
    async countAttempt(apiSessionId, ttlSeconds) {
      try {
        return await cache.increment(mfaAttemptsKey(apiSessionId), ttlSeconds);
      } catch (err) {
        throw unavailable(err);
      }
    },
    async clearAttempts(apiSessionId) {
      try {
        await cache.del(mfaAttemptsKey(apiSessionId));
      } catch (err) {
        log(`identity-auth: clearing the MFA attempts of API session ${apiSessionId} failed: ${(err as Error).message}`);
      }
    },
  };
}
