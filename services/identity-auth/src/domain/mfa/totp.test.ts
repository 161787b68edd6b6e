import { RECOVERY_CODE_COUNT, base32Decode, base32Encode, hotp, newRecoveryCodes, newTotpSecret, provisioningUrl, totpCode, totpSteps, verifyTotp } from './totp.js';

describe('TOTP (RFC 6238 as dgoogauth does it)', () => {
  // RFC 6238 appendix B, SHA-1 secret "12345678901234567890", truncated to 6 digits.
  const rfcSecret = base32Encode(Buffer.from('12345678901234567890'));
  it.each([
    [59, '287082'],
    [1111111109, '081804'],
    [1111111111, '050471'],
    [1234567890, '005924'],
    [2000000000, '279037'],
  ])('matches the RFC 6238 test vector at t=%i', (t, code) => {
    expect(totpCode(rfcSecret, t * 1000)).toBe(code);
  });

  it('matches the RFC 4226 HOTP vectors', () => {
    const key = Buffer.from('12345678901234567890');
    expect([0, 1, 2, 9].map((c) => hotp(key, c))).toEqual(['755224', '287082', '359152', '520489']);
  });

  it('accepts codes of t-2 … t+2 steps only, and only 6 digits', () => {
    const secret = newTotpSecret();
    const now = Date.UTC(2026, 0, 2, 3, 4, 5);
    for (const d of [-2, -1, 0, 1, 2]) expect(verifyTotp(secret, totpCode(secret, now + d * 30_000), now)).toBe(true);
    for (const d of [-3, 3]) expect(verifyTotp(secret, totpCode(secret, now + d * 30_000), now)).toBe(false);
    expect(verifyTotp(secret, '', now)).toBe(false);
    expect(verifyTotp(secret, `${totpCode(secret, now)}0`, now)).toBe(false);
    expect(verifyTotp(secret, 'abcdef', now)).toBe(false);
  });

  it('names the time step a code belongs to, so its use can be recorded', () => {
    const secret = rfcSecret; // fixed secret and time: no chance collision between steps
    const now = Date.UTC(2026, 0, 2, 3, 4, 5);
    const step = Math.floor(now / 30_000);
    expect(totpSteps(secret, totpCode(secret, now), now)).toEqual([step]);
    expect(totpSteps(secret, totpCode(secret, now + 30_000), now)).toEqual([step + 1]);
    expect(totpSteps(secret, totpCode(secret, now - 60_000), now)).toEqual([step - 2]);
    expect(totpSteps(secret, totpCode(secret, now + 90_000), now)).toEqual([]);
    expect(totpSteps(secret, 'abcdef', now)).toEqual([]);
  });

  it('makes 10-byte secrets (16 base32 characters) and 20 recovery codes of 6 base32 characters', () => {
    const secret = newTotpSecret();
    expect(secret).toMatch(/^[A-Z2-7]{16}$/);
    expect(base32Decode(secret)).toHaveLength(10);
    const codes = newRecoveryCodes();
    expect(codes).toHaveLength(RECOVERY_CODE_COUNT);
    for (const c of codes) expect(c).toMatch(/^[A-Z2-7]{6}$/);
  });

  it('round-trips base32 and rejects other characters', () => {
    const b = Buffer.from([0, 1, 2, 250, 251, 255, 7]);
    expect(base32Decode(base32Encode(b))).toEqual(b);
    expect(base32Decode('ab1')).toBeNull();
  });

  it('writes the provisioning URL with sorted query keys', () => {
    const url = new URL(provisioningUrl('JBSWY3DPEHPK3PXP', 'my laptop'));
    expect(url.protocol).toBe('otpauth:');
    expect(url.host).toBe('totp');
    expect(decodeURIComponent(url.pathname)).toBe('/openziti.io:my laptop');
    expect(url.search).toBe('?issuer=openziti.io&secret=JBSWY3DPEHPK3PXP');
  });
});
