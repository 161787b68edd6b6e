import { selfSignedCert } from '../testing/certs.js';
import { DEFAULT_CA_IDENTITY_NAME_FORMAT, commonNameOf, formatCaIdentityName, numberedName, withIdentityId } from './ca-identity.js';

describe('CA identity names', () => {
  const v = { caName: 'Acme CA', caId: 'ca1', commonName: 'sensor-7' };

  it('replaces every symbol the CA and certificate give, and leaves [identityId] for the create', () => {
    expect(formatCaIdentityName('[caName]/[caId]/[commonName]/[identityId]', v)).toBe('Acme CA/ca1/sensor-7/[identityId]');
    expect(formatCaIdentityName('', v)).toBe('Acme CA-sensor-7');
    expect(DEFAULT_CA_IDENTITY_NAME_FORMAT).toBe('[caName]-[commonName]');
  });

  it('[requestedName] is the requested name, or the identity id when none was requested (certificate login)', () => {
    expect(formatCaIdentityName('x-[requestedName]', { ...v, requestedName: 'kiosk' })).toBe('x-kiosk');
    expect(withIdentityId(formatCaIdentityName('x-[requestedName]', v), 'id9')).toBe('x-id9');
  });

  it('[identityId] becomes the assigned id; an empty name falls back to it', () => {
    expect(withIdentityId('dev-[identityId]-[identityId]', 'abc')).toBe('dev-abc-abc');
    expect(withIdentityId('', 'abc')).toBe('abc');
  });

  it('is in the stored form of names (NFC, no surrounding white space); a blank one falls back to the id', () => {
    expect(withIdentityId(' cafe\u0301-[identityId] ', 'abc')).toBe('caf\u00e9-abc');
    expect(withIdentityId('  ', 'abc')).toBe('abc');
  });

  it('a taken name gets a six-digit counter, as the controller', () => {
    expect([1, 2, 123456].map((n) => numberedName('cam', n))).toEqual(['cam000001', 'cam000002', 'cam123456']);
  });

  it('reads the subject common name of a PEM certificate', () => {
    expect(commonNameOf(selfSignedCert('device-42').certPem)).toBe('device-42');
    expect(commonNameOf('not a certificate')).toBe('');
  });
});
