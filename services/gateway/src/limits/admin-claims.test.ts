import type { IncomingMessage } from 'node:http';
import { principalCacheEntry, principalCacheKey } from '@ziti/http-kit';
import { createMemoryCache } from '@ziti/messaging';
import { testPrincipal } from '../testing/harness.js';
import { AdminClaims, loginClaim } from './admin-claims.js';

const jwt = (claims: object) => `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;
const request = (headers: Record<string, string> = {}, fingerprint?: string) =>
  ({ headers, headersDistinct: {}, socket: fingerprint ? { getPeerCertificate: () => ({ fingerprint256: fingerprint }) } : {} }) as unknown as IncomingMessage;

describe('loginClaim', () => {
  it('is the username of a password login', () => {
    expect(loginClaim('password', request(), 'admin')).toBe('password:admin');
    expect(loginClaim('password', request(), undefined)).toBeUndefined();
  });

  it('is the client certificate’s fingerprint of a certificate login', () => {
    expect(loginClaim('cert', request({}, 'AB:CD'), undefined)).toBe('cert:AB:CD');
    expect(loginClaim('cert', request(), undefined)).toBeUndefined();
  });

  it('is the issuer and subject of an external JWT login (read, not verified: identity-auth verifies)', () => {
    expect(loginClaim('ext-jwt', request({ authorization: `Bearer ${jwt({ iss: 'https://idp', sub: 'u-1' })}` }), undefined)).toBe('ext-jwt:https://idp u-1');
    for (const authorization of ['Bearer not-a-jwt', `Bearer ${jwt({ iss: 'https://idp' })}`, 'Bearer a.%%%.c', 'Basic abc']) {
      expect(loginClaim('ext-jwt', request({ authorization }), undefined)).toBeUndefined();
    }
  });

  it('is nothing for another method', () => {
    expect(loginClaim(undefined, request(), 'admin')).toBeUndefined();
    expect(loginClaim('oidc', request(), 'admin')).toBeUndefined();
  });
});

describe('AdminClaims', () => {
  it('learns from the new session’s cached principal whether a claim is an admin’s, and forgets after an hour', async () => {
    let now = 1_000_000;
    const cache = createMemoryCache({ now: () => now });
    const claims = new AdminClaims(cache, () => now);
    await cache.set(principalCacheKey('t-admin'), principalCacheEntry(testPrincipal({ isAdmin: true }), 30, now), 30);
    await cache.set(principalCacheKey('t-user'), principalCacheEntry(testPrincipal({ isAdmin: false }), 30, now), 30);
    await claims.learn('password:admin', 't-admin');
    await claims.learn('password:user', 't-user');
    expect(claims.isAdmin('password:admin')).toBe(true);
    expect(claims.isAdmin('password:user')).toBe(false);
    expect(claims.isAdmin('password:unknown')).toBe(false);
    now += 60 * 60_000 + 1;
    expect(claims.isAdmin('password:admin')).toBe(false);
  });

  it('learns nothing from a session that is not cached (MFA outstanding) or an unreadable entry', async () => {
    const cache = createMemoryCache();
    const claims = new AdminClaims(cache);
    await claims.learn('password:a', 'no-such-session');
    await cache.set(principalCacheKey('garbled'), '{not json', 30);
    await claims.learn('password:a', 'garbled');
    expect(claims.isAdmin('password:a')).toBe(false);
    // Still unknown: the next successful login is read again.
    await cache.set(principalCacheKey('t'), principalCacheEntry(testPrincipal({ isAdmin: true }), 30, Date.now()), 30);
    await claims.learn('password:a', 't');
    expect(claims.isAdmin('password:a')).toBe(true);
  });
});
