import { ApiError } from '@ziti/errors';
import { fullAuthPolicy, patchedAuthPolicy, referencedSigners } from './auth-policy-rules.js';
import { bearerTokens, extJwtChallenge, identityClaim } from './ext-jwt/jwt-verifier.js';
import { checkPasswordRules } from './password.js';
import { isFullyAuthenticated, secondaryChallenge } from './session-state.js';

const rules = { primaryUpdbMinPasswordLength: 8, primaryUpdbRequireSpecialChar: true, primaryUpdbRequireNumberChar: true, primaryUpdbRequireMixedCase: true };
const reasonOf = (fn: () => void) => {
  try {
    fn();
    return 'ok';
  } catch (err) {
    return (err as ApiError).cause?.reason ?? String(err);
  }
};

describe('password rules of an auth policy', () => {
  it('checks length, numbers, mixed case and special characters', () => {
    expect(reasonOf(() => checkPasswordRules('Ab1!', rules))).toMatch(/at least 8/);
    expect(reasonOf(() => checkPasswordRules('Abcdefg!', rules))).toMatch(/number/);
    expect(reasonOf(() => checkPasswordRules('abcdefg1!', rules))).toMatch(/upper and lower/);
    expect(reasonOf(() => checkPasswordRules('Abcdefg12', rules))).toMatch(/special/);
    expect(reasonOf(() => checkPasswordRules('Abcdef1!', rules))).toBe('ok');
    expect(reasonOf(() => checkPasswordRules('x'.repeat(101), { ...rules, primaryUpdbRequireMixedCase: false }))).toMatch(/at most 100/);
  });

  it('never goes below the 5-character minimum', () => {
    const lax = { primaryUpdbMinPasswordLength: 0, primaryUpdbRequireSpecialChar: false, primaryUpdbRequireNumberChar: false, primaryUpdbRequireMixedCase: false };
    expect(reasonOf(() => checkPasswordRules('abcd', lax))).toMatch(/at least 5/);
    expect(reasonOf(() => checkPasswordRules('abcde', lax))).toBe('ok');
  });
});

describe('auth policy documents', () => {
  const body = {
    name: 'p',
    primary: {
      cert: { allowed: true, allowExpiredCerts: false },
      extJwt: { allowed: true, allowedSigners: ['s1', 's1', 's2'] },
      updb: { allowed: true, minPasswordLength: 2, requireSpecialChar: false, requireNumberChar: true, requireMixedCase: false, maxAttempts: -3, lockoutDurationMinutes: -1 },
    },
    secondary: { requireTotp: true, requireExtJwtSigner: 's3' },
  };

  it('takes every field, clamps below-minimum values and de-duplicates signers', () => {
    const f = fullAuthPolicy(body);
    expect(f).toMatchObject({ primaryUpdbMinPasswordLength: 5, primaryUpdbMaxAttempts: 0, primaryUpdbLockoutDurationMinutes: 0, primaryExtJwtAllowedSigners: ['s1', 's2'] });
    expect(referencedSigners(f)).toEqual(['s1', 's2', 's3']);
  });

  it('patches the named leaves; an empty or null signer clears it', () => {
    const f = fullAuthPolicy(body);
    const p = patchedAuthPolicy(f, { primary: { updb: { maxAttempts: 4, allowed: null } }, secondary: { requireExtJwtSigner: '' } });
    expect(p).toMatchObject({ primaryUpdbMaxAttempts: 4, primaryUpdbAllowed: true, secondaryRequiredExtJwtSigner: null, secondaryRequireTotp: true, name: 'p' });
    expect(patchedAuthPolicy(f, { name: null }).name).toBe('p');
    expect(reasonOf(() => patchedAuthPolicy(f, { name: '' }))).toMatch(/name/);
    expect(reasonOf(() => patchedAuthPolicy(f, { name: '  ' }))).toMatch(/name/);
    expect(patchedAuthPolicy(f, { name: ' cafe\u0301 ' }).name).toBe('caf\u00e9');
    expect(fullAuthPolicy({ ...body, name: 'x\u0301 ' }).name).toBe('x\u0301');
  });

  it('refuses updb counts that a 32-bit column can not hold, on create and patch', () => {
    const f = fullAuthPolicy(body);
    const over = 2 ** 31;
    expect(reasonOf(() => fullAuthPolicy({ ...body, primary: { ...body.primary, updb: { ...body.primary!.updb, maxAttempts: over } } }))).toBe(
      'primary.updb.maxAttempts in body should be less than or equal to 2147483647',
    );
    expect(reasonOf(() => patchedAuthPolicy(f, { primary: { updb: { lockoutDurationMinutes: over } } }))).toMatch(/^primary\.updb\.lockoutDurationMinutes in body/);
    expect(reasonOf(() => patchedAuthPolicy(f, { primary: { updb: { minPasswordLength: over } } }))).toMatch(/^primary\.updb\.minPasswordLength in body/);
    expect(patchedAuthPolicy(f, { primary: { updb: { maxAttempts: 2 ** 31 - 1 } } }).primaryUpdbMaxAttempts).toBe(2 ** 31 - 1);
  });
});

describe('external JWT helpers', () => {
  it('collects at most three bearer tokens from every Authorization line', () => {
    expect(bearerTokens(['Bearer a', 'Basic x', 'bearer  b ', 'Bearer c, Bearer d'])).toEqual(['a', 'b', 'c']);
    expect(bearerTokens(undefined)).toEqual([]);
  });

  it('reads the identity claim by name or JSON pointer', () => {
    const claims = { sub: 'id1', email: 'a@b', ext: { 'a/b': { id: 'x' } }, n: 5 };
    expect(identityClaim(claims, 'sub')).toBe('id1');
    expect(identityClaim(claims, '/sub')).toBe('id1');
    expect(identityClaim(claims, '/ext/a~1b/id')).toBe('x');
    expect(identityClaim(claims, 'n')).toBeNull();
    expect(identityClaim(claims, '/missing/x')).toBeNull();
    expect(identityClaim({ sub: 'a\u0000b' }, 'sub')).toBeNull(); // no identity can have it: a failed login, not a database error
    expect(identityClaim({ sub: '\ud800' }, 'sub')).toBeNull();
  });

  it('writes the ext-jwt challenges with ids and issuers joined by |', () => {
    const s = (id: string, issuer: string) => ({ id, issuer }) as never;
    expect(extJwtChallenge('primary', 'missing', [s('a', 'i1'), s('b', 'i2')])).toBe(
      'Bearer realm="openziti-primary-ext-jwt" error="missing" error_description="no matching token was provided" id="a|b" issuer="i1|i2"',
    );
    expect(secondaryChallenge({ totpPending: false, totpEnrolled: false, extJwt: { ok: false, error: 'expired', signer: s('a', 'i') } })).toBe(
      'Bearer realm="openziti-secondary-ext-jwt" error="expired" error_description="token expired" id="a" issuer="i"',
    );
  });

  it('quotes and escapes the issuers in the challenge: no text can add a parameter or break the header', () => {
    const s = (id: string, issuer: string) => ({ id, issuer }) as never;
    const challenge = extJwtChallenge('primary', 'invalid', [s('a', 'x" error="forged'), s('b', 'back\\slash €\r\nset-cookie: a=b')]);
    expect(challenge).toBe(
      'Bearer realm="openziti-primary-ext-jwt" error="invalid" error_description="token is invalid" id="a|b" ' +
        'issuer="x\\" error=\\"forged|back\\\\slash %E2%82%AC%0D%0Aset-cookie: a=b"',
    );
    expect(challenge).toMatch(/^[\x20-\x7e]+$/);
  });

  it('a session is complete when no factor is outstanding', () => {
    expect(isFullyAuthenticated({ totpPending: false, totpEnrolled: false })).toBe(true);
    expect(isFullyAuthenticated({ totpPending: true, totpEnrolled: true })).toBe(false);
    expect(isFullyAuthenticated({ totpPending: false, totpEnrolled: false, extJwt: { ok: true } })).toBe(true);
    expect(isFullyAuthenticated({ totpPending: false, totpEnrolled: false, extJwt: { ok: false, error: 'missing', signer: null } })).toBe(false);
  });
});
