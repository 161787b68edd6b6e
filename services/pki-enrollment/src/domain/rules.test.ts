import { ApiError } from '@ziti/errors';
import { DEFAULT_IDENTITY_NAME_FORMAT, claimFrom, formatIdentityName } from './cas.js';
import { enrollmentLifetimeMs, jwtMethod } from './enrollments.js';
import { canonicalSan } from './pki.js';

describe('CA identity names', () => {
  it('replace every symbol but [identityId], which identity-auth fills in', () => {
    const v = { caName: 'Acme', caId: 'c1', commonName: 'dev-7', requestedName: 'bob' };
    expect(formatIdentityName('[caName] - [caId] - [commonName] - [requestedName] - [identityId]', v)).toBe('Acme - c1 - dev-7 - bob - [identityId]');
    expect(formatIdentityName('', v)).toBe('Acme-dev-7');
    expect(DEFAULT_IDENTITY_NAME_FORMAT).toBe('[caName]-[commonName]');
    expect(formatIdentityName('static.name', v)).toBe('static.name');
  });
});

describe('externalId claims', () => {
  const full = { location: 'SAN_URI', matcher: 'SCHEME', matcherCriteria: 'spiffe', parser: 'NONE', parserCriteria: '', index: 0 };

  it('are taken whole on create and merged into the current one on patch; null clears', () => {
    expect(claimFrom(full)).toEqual(full);
    expect(claimFrom({ index: 2, parser: 'SPLIT', parserCriteria: '/' }, full)).toEqual({ ...full, index: 2, parser: 'SPLIT', parserCriteria: '/' });
    expect(claimFrom(undefined, full)).toEqual(full);
    expect(claimFrom(null)).toBeNull();
  });

  it.each([
    [{ ...full, location: 'DNS' }, 'externalIdClaim.location'],
    [{ ...full, matcher: 'PREFIX' }, 'externalIdClaim.matcher'],
    [{ ...full, location: 'COMMON_NAME' }, 'externalIdClaim.matcher'],
    [{ ...full, matcherCriteria: '' }, 'externalIdClaim.matcherCriteria'],
    [{ ...full, parser: 'SPLIT' }, 'externalIdClaim.parserCriteria'],
    [{ ...full, index: -1 }, 'externalIdClaim.index'],
  ])('refuses %j with a field error on %s', (claim, field) => {
    const err = (() => {
      try {
        claimFrom(claim);
      } catch (e) {
        return e as ApiError;
      }
      throw new Error('accepted');
    })();
    expect([err.code, err.cause?.field]).toEqual(['COULD_NOT_VALIDATE', field]);
  });
});

describe('enrollment rules', () => {
  it('lifetimes default to 180 minutes, with a 5-minute floor', () => {
    expect(enrollmentLifetimeMs()).toBe(180 * 60_000);
    expect(enrollmentLifetimeMs(4)).toBe(180 * 60_000);
    expect(enrollmentLifetimeMs(30)).toBe(30 * 60_000);
  });

  it('transit routers enroll with the erott JWT method', () => {
    expect(jwtMethod('trott')).toBe('erott');
    expect(jwtMethod('ott')).toBe('ott');
  });

  it('compares SANs canonically', () => {
    expect(canonicalSan(' LOCALHOST ')).toBe('localhost');
    expect(canonicalSan('0:0:0:0:0:0:0:1')).toBe('::1');
  });
});
