import { generateKeyPairSync } from 'node:crypto';
import { ApiError } from '@ziti/errors';
import { checkFetchableUrl, checkSigner, fullSigner, isBlockedAddress, patchedSigner } from './signer-rules.js';
import { selfSignedCert } from '../../testing/certs.js';

const codeOf = (fn: () => unknown) => {
  try {
    fn();
    return 'ok';
  } catch (err) {
    return err instanceof ApiError ? `${err.code}:${err.cause?.field ?? ''}` : String(err);
  }
};

describe('external JWT signer rules', () => {
  it('blocks link-local, metadata, unspecified and multicast addresses, allows loopback and private ones', () => {
    for (const ip of ['169.254.169.254', '169.254.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', 'fe80::1', '::', 'fd00:ec2::254', '::ffff:169.254.169.254', '100.100.100.200']) {
      expect([ip, isBlockedAddress(ip)]).toEqual([ip, true]);
    }
    for (const ip of ['127.0.0.1', '10.1.2.3', '192.168.1.1', '172.16.0.1', '::1', '8.8.8.8', '2001:db8::1']) {
      expect([ip, isBlockedAddress(ip)]).toEqual([ip, false]);
    }
  });

  it('accepts http(s) JWKS URLs and refuses other schemes and blocked address literals', () => {
    expect(codeOf(() => checkFetchableUrl('jwksEndpoint', 'https://idp.example.com/.well-known/jwks.json'))).toBe('ok');
    expect(codeOf(() => checkFetchableUrl('jwksEndpoint', 'http://localhost:8080/jwks'))).toBe('ok');
    expect(codeOf(() => checkFetchableUrl('jwksEndpoint', 'http://169.254.169.254/latest/meta-data/'))).toBe('COULD_NOT_VALIDATE:jwksEndpoint');
    expect(codeOf(() => checkFetchableUrl('jwksEndpoint', 'http://[fe80::1]/jwks'))).toBe('COULD_NOT_VALIDATE:jwksEndpoint');
    expect(codeOf(() => checkFetchableUrl('jwksEndpoint', 'file:///etc/passwd'))).toBe('COULD_NOT_VALIDATE:jwksEndpoint');
    expect(codeOf(() => checkFetchableUrl('jwksEndpoint', 'not a url'))).toBe('COULD_NOT_VALIDATE:jwksEndpoint');
  });

  it('needs exactly one of certPem and jwksEndpoint, and a kid with certPem', () => {
    const { certPem } = selfSignedCert('signer');
    const base = { name: 'n', enabled: true, issuer: 'i', audience: 'a' };
    expect(codeOf(() => checkSigner(fullSigner(base)))).toBe('COULD_NOT_VALIDATE:certPem');
    expect(codeOf(() => checkSigner(fullSigner({ ...base, certPem, jwksEndpoint: 'https://x.example/jwks' })))).toBe('COULD_NOT_VALIDATE:certPem');
    expect(codeOf(() => checkSigner(fullSigner({ ...base, certPem })))).toBe('COULD_NOT_VALIDATE:kid');
    expect(codeOf(() => checkSigner(fullSigner({ ...base, certPem: 'nope', kid: 'k' })))).toBe('INVALID_CERT_PEM:certPem');
    expect(codeOf(() => checkSigner(fullSigner({ ...base, certPem: certPem + certPem, kid: 'k' })))).toBe('INVALID_CERT_PEM:certPem');
    expect(codeOf(() => checkSigner(fullSigner({ ...base, targetToken: 'OTHER', certPem, kid: 'k' })))).toBe('COULD_NOT_VALIDATE:targetToken');
  });

  it('derives the certificate facts and defaults', () => {
    const { certPem, fingerprint } = selfSignedCert('so-common');
    const f = fullSigner({ name: 'n', enabled: true, issuer: 'i', audience: 'a', certPem, kid: 'k' });
    expect(f).toMatchObject({ claimsProperty: 'sub', targetToken: 'ACCESS', useExternalId: false, scopes: [], externalAuthUrl: null });
    const facts = checkSigner(f);
    expect(facts.fingerprint).toBe(fingerprint);
    expect(facts.fingerprint).toMatch(/^[0-9a-f]{40}$/);
    expect(facts.commonName).toBe('so-common');
    expect(facts.notAfter!.getTime()).toBeGreaterThan(facts.notBefore!.getTime());
  });

  it('patches only what the body names; null clears a nullable field', () => {
    const { certPem } = selfSignedCert('p');
    const current = fullSigner({ name: 'n', enabled: true, issuer: 'i', audience: 'a', certPem, kid: 'k', clientId: 'c' });
    const next = patchedSigner(current, { name: 'm', clientId: null, enabled: null });
    expect(next).toMatchObject({ name: 'm', clientId: null, enabled: true, issuer: 'i', kid: 'k' });
    void generateKeyPairSync;
  });
});
