import { SecretBox } from './secret-box.js';

describe('SecretBox', () => {
  it('seals and opens; the sealed form shows nothing of the secret', () => {
    const box = new SecretBox('deployment-secret');
    const sealed = box.seal('JBSWY3DPEHPK3PXP', 'identity-1');
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('JBSWY3DPEHPK3PXP');
    expect(box.open(sealed, 'identity-1')).toBe('JBSWY3DPEHPK3PXP');
    expect(box.seal('JBSWY3DPEHPK3PXP', 'identity-1')).not.toBe(sealed);
  });

  it('refuses another record, another key and tampered values', () => {
    const box = new SecretBox('deployment-secret');
    const sealed = box.seal('secret', 'identity-1');
    expect(() => box.open(sealed, 'identity-2')).toThrow();
    expect(() => new SecretBox('other').open(sealed, 'identity-1')).toThrow();
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    raw[14] ^= 1;
    expect(() => box.open(`v1.${raw.toString('base64url')}`, 'identity-1')).toThrow();
    expect(() => box.open('plain', 'identity-1')).toThrow();
  });
});
