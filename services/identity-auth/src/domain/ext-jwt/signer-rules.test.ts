import { generateKeyPairSync } from 'node:crypto';
import { ApiError } from '@ziti/errors';
import { checkSigner, fullSigner, patchedSigner } from './signer-rules.js';
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
  it('takes http(s) JWKS URLs only (where they may point is checked by the outbound guard, see clients/outbound-url)', () => {
    const base = { name: 'n', enabled: true, issuer: 'i', audience: 'a' };
    expect(codeOf(() => checkSigner(fullSigner({ ...base, jwksEndpoint: 'https://idp.example.com/.well-known/jwks.json' })))).toBe('ok');
    expect(codeOf(() => checkSigner(fullSigner({ ...base, jwksEndpoint: 'file:///etc/passwd' })))).toBe('COULD_NOT_VALIDATE:jwksEndpoint');
    expect(codeOf(() => checkSigner(fullSigner({ ...base, jwksEndpoint: 'not a url' })))).toBe('COULD_NOT_VALIDATE:jwksEndpoint');
  });

  it('stores the name NFC-normalised without surrounding white space; a blank name is missing', () => {
    const base = { name: ' cafe\u0301 ', enabled: true, issuer: 'i', audience: 'a' };
    expect(fullSigner(base).name).toBe('caf\u00e9');
    expect(patchedSigner(fullSigner(base), { name: 'x\u00a0' }).name).toBe('x');
    expect(codeOf(() => fullSigner({ ...base, name: '   ' }))).toBe('COULD_NOT_VALIDATE:name');
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
