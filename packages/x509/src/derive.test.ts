import { createPublicKey, sign, verify } from 'node:crypto';
import { EDGE_SERVER_KEY_PURPOSE, deriveEcKey } from './derive.js';

describe('deriveEcKey', () => {
  it('gives the same P-256 key for the same secret and purpose, and a working one', () => {
    const a = deriveEcKey('s3cret-of-at-least-some-length', EDGE_SERVER_KEY_PURPOSE);
    const b = deriveEcKey('s3cret-of-at-least-some-length', EDGE_SERVER_KEY_PURPOSE);
    expect(a.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(a.export({ format: 'jwk' })).toEqual(b.export({ format: 'jwk' }));
    const sig = sign('sha256', Buffer.from('hello'), a);
    expect(verify('sha256', Buffer.from('hello'), createPublicKey(b), sig)).toBe(true);
  });

  it('gives different keys for another secret or another purpose', () => {
    const base = deriveEcKey('secret-one', 'p').export({ format: 'jwk' }).d;
    expect(deriveEcKey('secret-two', 'p').export({ format: 'jwk' }).d).not.toBe(base);
    expect(deriveEcKey('secret-one', 'q').export({ format: 'jwk' }).d).not.toBe(base);
  });

  it('refuses an empty secret', () => {
    expect(() => deriveEcKey('', 'p')).toThrow(/empty/);
  });
});
