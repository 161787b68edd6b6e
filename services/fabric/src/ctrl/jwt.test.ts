import { generateKeyPairSync, sign } from 'node:crypto';
import { jwtKid, verifyJwt } from './jwt.js';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');

function jwt(claims: object, header: object = { alg: 'ES256', kid: 'k1' }, key = privateKey): string {
  const input = `${b64(header)}.${b64(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

describe('router token checks', () => {
  const now = Math.floor(Date.now() / 1000);
  it('verifies a token signed by the key, within its lifetime', () => {
    const t = jwt({ sub: 's', exp: now + 60 });
    expect(jwtKid(t)).toBe('k1');
    expect(verifyJwt(t, publicKey)).toMatchObject({ sub: 's' });
  });
  it('refuses another key, an expired token, alg none and HMAC, and garbage', () => {
    expect(verifyJwt(jwt({ exp: now + 60 }, undefined, other.privateKey), publicKey)).toBeUndefined();
    expect(verifyJwt(jwt({ exp: now - 60 }), publicKey)).toBeUndefined();
    const unsigned = `${b64({ alg: 'none', kid: 'k1' })}.${b64({ sub: 's' })}.`;
    expect(verifyJwt(unsigned, publicKey)).toBeUndefined();
    expect(verifyJwt(`${b64({ alg: 'HS256' })}.${b64({})}.AAAA`, publicKey)).toBeUndefined();
    for (const g of ['', 'a.b', 'a.b.c', 'ey.ey.ey', 'x'.repeat(20000)]) {
      expect(jwtKid(g)).toBeUndefined();
      expect(verifyJwt(g, publicKey)).toBeUndefined();
    }
  });
});
