import { isRevokedByMarkers, revocationMarkerKey } from './principal-cache.js';

const NONE = { jti: null, apiSession: null, identity: null };

describe('revocation markers', () => {
  it('keys a marker by its type and id', () => {
    expect(revocationMarkerKey('JTI', 'j-1')).toBe('ziti:revoked:JTI:j-1');
    expect(revocationMarkerKey('API_SESSION', 'as-1')).toBe('ziti:revoked:API_SESSION:as-1');
    expect(revocationMarkerKey('IDENTITY', 'id-1')).toBe('ziti:revoked:IDENTITY:id-1');
  });

  it('no marker: not revoked', () => {
    expect(isRevokedByMarkers(NONE, 1_700_000_000)).toBe(false);
  });

  it('a JTI or API_SESSION marker revokes whatever it holds', () => {
    expect(isRevokedByMarkers({ ...NONE, jti: '1' }, 1_700_000_000)).toBe(true);
    expect(isRevokedByMarkers({ ...NONE, apiSession: '1' }, 1_700_000_000)).toBe(true);
    expect(isRevokedByMarkers({ ...NONE, jti: '' }, 1_700_000_000)).toBe(true);
  });

  it('an IDENTITY marker revokes tokens issued before its issuedBefore (ms), not those issued at or after it', () => {
    const iat = 1_700_000_000;
    expect(isRevokedByMarkers({ ...NONE, identity: String(iat * 1000 + 1) }, iat)).toBe(true);
    expect(isRevokedByMarkers({ ...NONE, identity: String(iat * 1000) }, iat)).toBe(false);
    expect(isRevokedByMarkers({ ...NONE, identity: String(iat * 1000 - 5000) }, iat)).toBe(false);
  });

  it('an IDENTITY marker that is not a number, or a token without a usable iat, counts as revoked', () => {
    expect(isRevokedByMarkers({ ...NONE, identity: 'soon' }, 1_700_000_000)).toBe(true);
    expect(isRevokedByMarkers({ ...NONE, identity: '' }, 1_700_000_000)).toBe(true);
    expect(isRevokedByMarkers({ ...NONE, identity: '1700000000000' }, Number.NaN)).toBe(true);
  });
});
