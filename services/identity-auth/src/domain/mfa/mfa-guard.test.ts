import { ApiError } from '@ziti/errors';
import { createMemoryCache } from '@ziti/messaging';
import { cacheMfaGuardStore } from '../../store/mfa-guard-cache.js';
import { MFA_MAX_FAILURES, MfaGuard, TOTP_CLAIM_TTL_SECONDS } from './mfa-guard.js';
import { TOTP_SKEW_STEPS, TOTP_STEP_SECONDS, base32Encode, totpCode } from './totp.js';

/** The guard on the in-memory cache of the embedded controller (the Redis path is in mfa-guard.int.test.ts). */
describe('MFA guard', () => {
  const secret = base32Encode(Buffer.from('0123456789'));
  const at = Date.UTC(2026, 3, 4, 5, 6, 7);
  const guard = () => new MfaGuard(cacheMfaGuardStore(createMemoryCache(), () => undefined));
  const refusal = (p: Promise<unknown>) => p.then(() => 'admitted', (err: ApiError) => err.code);

  it('accepts a TOTP code once per identity, and each step of the window once', async () => {
    const g = guard();
    const code = totpCode(secret, at);
    expect(await g.acceptTotp('id-1', secret, code, at)).toBe(true);
    expect(await g.acceptTotp('id-1', secret, code, at)).toBe(false);
    expect(await g.acceptTotp('id-1', secret, code, at + TOTP_STEP_SECONDS * 1000)).toBe(false); // same step, later
    expect(await g.acceptTotp('id-2', secret, code, at)).toBe(true); // another identity
    expect(await g.acceptTotp('id-1', secret, totpCode(secret, at + 30_000), at)).toBe(true);
    expect(await g.acceptTotp('id-1', secret, totpCode(secret, at - 30_000), at)).toBe(true);
    expect(await g.acceptTotp('id-1', secret, '000000', at)).toBe(false);
  });

  it('claims a step for longer than the window accepts it', () => {
    expect(TOTP_CLAIM_TTL_SECONDS).toBeGreaterThanOrEqual((2 * TOTP_SKEW_STEPS + 1) * TOTP_STEP_SECONDS);
  });

  it(`admits ${MFA_MAX_FAILURES} code checks per session, concurrent ones included, until a code is accepted`, async () => {
    const g = guard();
    const outcomes = await Promise.all(Array.from({ length: 25 }, () => refusal(g.admit('s-1'))));
    expect(outcomes.filter((o) => o === 'admitted')).toHaveLength(MFA_MAX_FAILURES);
    expect(outcomes.filter((o) => o === 'MFA_INVALID_TOKEN')).toHaveLength(25 - MFA_MAX_FAILURES);
    expect(await refusal(g.admit('s-2'))).toBe('admitted');
    await g.accepted('s-1');
    expect(await refusal(g.admit('s-1'))).toBe('admitted');
  });
});
