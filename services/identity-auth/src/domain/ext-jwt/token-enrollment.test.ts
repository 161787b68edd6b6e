import type { ExternalJwtSigner } from '../auth-model.js';
import { claimAt } from './jwt-verifier.js';
import { enrollmentClaims } from './token-enrollment.js';

const signer = (over: Partial<ExternalJwtSigner> = {}) =>
  ({ claimsProperty: 'sub', enrollNameClaimsSelector: '', enrollAttributeClaimsSelector: '', ...over }) as ExternalJwtSigner;

describe('claimAt (the enrollment selectors)', () => {
  const claims = { sub: 's', a: { b: 'deep', 'x/y': 'slash', 't~': 'tilde' }, list: ['zero', 'one'], n: null };

  it('reads JSON pointers, with or without the leading slash, escapes and array indexes', () => {
    expect(claimAt(claims, '/sub')).toBe('s');
    expect(claimAt(claims, 'sub')).toBe('s');
    expect(claimAt(claims, 'a/b')).toBe('deep');
    expect(claimAt(claims, '/a/x~1y')).toBe('slash');
    expect(claimAt(claims, '/a/t~0')).toBe('tilde');
    expect(claimAt(claims, '/list/1')).toBe('one');
    expect(claimAt(claims, '/n')).toBeNull();
  });

  it('names nothing for missing keys, bad indexes and inherited properties', () => {
    expect(claimAt(claims, '/missing')).toBeUndefined();
    expect(claimAt(claims, '/list/2')).toBeUndefined();
    expect(claimAt(claims, '/list/01')).toBeUndefined();
    expect(claimAt(claims, '/list/length')).toBeUndefined();
    expect(claimAt(claims, '/sub/0')).toBeUndefined();
    expect(claimAt(claims, '/toString')).toBeUndefined();
    expect(claimAt(claims, '/n/x')).toBeUndefined();
  });
});

describe('enrollmentClaims', () => {
  it('defaults: the name is the subject, no role attributes, externalId from claimsProperty', () => {
    expect(enrollmentClaims({ sub: 'alice' }, signer())).toEqual({ externalId: 'alice', name: 'alice', roleAttributes: [] });
  });

  it('custom selectors: id, name, attributes from an array (empties and repeats dropped) or one string', () => {
    const s = signer({ claimsProperty: 'customId', enrollNameClaimsSelector: '/profile/name', enrollAttributeClaimsSelector: 'groups' });
    expect(enrollmentClaims({ sub: 'x', customId: 'id-1', profile: { name: 'Alice' }, groups: ['a', '', 'b', 'a'] }, s)).toEqual({
      externalId: 'id-1', name: 'Alice', roleAttributes: ['a', 'b'],
    });
    expect(enrollmentClaims({ customId: 'id-1', profile: { name: 'Alice' }, groups: 'solo' }, s)?.roleAttributes).toEqual(['solo']);
    expect(enrollmentClaims({ customId: 'id-1', profile: { name: 'Alice' }, groups: '' }, s)?.roleAttributes).toEqual([]);
    expect(enrollmentClaims({ customId: 'id-1', profile: { name: 'Alice' }, groups: null }, s)?.roleAttributes).toEqual([]);
    expect(enrollmentClaims({ customId: 'id-1', profile: { name: 'Alice' } }, s)?.roleAttributes).toEqual([]);
  });

  it('refuses a token without an identity claim or a name, or with attributes that are not strings', () => {
    const s = signer({ enrollNameClaimsSelector: 'name', enrollAttributeClaimsSelector: 'groups' });
    const ok = { sub: 'id', name: 'n', groups: ['g'] };
    expect(enrollmentClaims(ok, s)).not.toBeNull();
    expect(enrollmentClaims({ ...ok, name: ' cafe\u0301 ' }, s)?.name).toBe('caf\u00e9');
    for (const bad of [
      { ...ok, sub: undefined },
      { ...ok, sub: 7 },
      { ...ok, sub: '' },
      { ...ok, name: undefined },
      { ...ok, name: null },
      { ...ok, name: '' },
      { ...ok, name: ' \t ' },
      { ...ok, name: 12 },
      { ...ok, name: 'nul\u0000' },
      { ...ok, name: '\ud800' },
      { ...ok, groups: 3 },
      { ...ok, groups: { a: 1 } },
      { ...ok, groups: ['g', 1] },
      { ...ok, groups: ['#all'] },
      { ...ok, groups: ['@id'] },
      { ...ok, groups: ['a\u0000'] },
    ]) {
      expect(enrollmentClaims(bad as Record<string, unknown>, s)).toBeNull();
    }
  });
});
