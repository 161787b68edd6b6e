import { X509Certificate, createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import forge from 'node-forge';
import { createTestCa, csrPem, ecKeyPair, rsaKeyPair } from '../testing/certs.js';
import { verifyChain } from '@ziti/x509';
import { externalIdOf } from './claims.js';
import { CsrError, parseCsr } from './csr.js';
import { estCaCertsBody } from './pkcs7.js';
import { KeyVault } from './secrets.js';
import { jwtSigner, signJwt } from './jwt.js';
import { certPem, fingerprint, issueCertificate, nameDer, spkiOf } from '@ziti/x509';

const DAY = 24 * 3600_000;

function smallPki() {
  const rootKeys = ecKeyPair();
  const rootName = nameDer('Root');
  const now = Date.now();
  const rootDer = issueCertificate({ subjectDer: rootName, spkiDer: spkiOf(rootKeys.publicKey), selfKey: rootKeys.privateKey, notBefore: new Date(now - DAY), notAfter: new Date(now + 10 * DAY), kind: 'root' });
  const intKeys = ecKeyPair();
  const intName = nameDer('Intermediate');
  const intDer = issueCertificate({
    subjectDer: intName, spkiDer: spkiOf(intKeys.publicKey), notBefore: new Date(now - DAY), notAfter: new Date(now + 5 * DAY), kind: 'intermediate', pathLen: 0,
    issuer: { nameDer: rootName, privateKey: rootKeys.privateKey, spkiDer: spkiOf(rootKeys.publicKey) },
  });
  return { rootDer, intDer, intIssuer: { nameDer: intName, privateKey: intKeys.privateKey, spkiDer: spkiOf(intKeys.publicKey) } };
}

describe('CSR parsing', () => {
  it('reads an EC P-256 request with its subject, key and requested SANs, and checks its signature', () => {
    const keys = ecKeyPair();
    const csr = parseCsr(csrPem(keys, { commonName: 'device-1', organisation: 'Acme', dns: ['a.example'], ips: ['10.0.0.1', '::1'], uris: ['spiffe://x/y'] }));
    expect(csr.commonName).toBe('device-1');
    expect(csr.publicKey.export({ format: 'jwk' })).toEqual(keys.publicKey.export({ format: 'jwk' }));
    expect(csr.sans).toEqual({ dns: ['a.example'], ip: ['10.0.0.1', '::1'], uri: ['spiffe://x/y'], email: [] });
  });

  it('reads RSA and P-384 requests, and one without a subject', () => {
    expect(parseCsr(csrPem(rsaKeyPair(), { commonName: 'rsa' })).commonName).toBe('rsa');
    expect(parseCsr(csrPem(ecKeyPair('P-384'), { commonName: 'p384' })).commonName).toBe('p384');
    expect(parseCsr(csrPem(ecKeyPair())).commonName).toBe('');
  });

  it('refuses garbage, a certificate, and a request whose signature was tampered with', () => {
    expect(() => parseCsr('not a csr')).toThrow(CsrError);
    expect(() => parseCsr('-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----')).toThrow(CsrError);
    const pem = csrPem(ecKeyPair(), { commonName: 'x' });
    const der = Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
    der[der.length - 5] ^= 0xff;
    expect(() => parseCsr(`-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----`)).toThrow(/signature|parse/);
  });
});

describe('certificate issuance', () => {
  it('issues a root, an intermediate and a leaf from a CSR that Node verifies, with SANs and key usages', () => {
    const { rootDer, intDer, intIssuer } = smallPki();
    const root = new X509Certificate(rootDer);
    const int = new X509Certificate(intDer);
    expect(root.ca).toBe(true);
    expect(root.verify(root.publicKey)).toBe(true);
    expect(int.ca).toBe(true);
    expect(int.checkIssued(root) && int.verify(root.publicKey)).toBe(true);

    const csr = parseCsr(csrPem(rsaKeyPair(), { commonName: 'ident' }));
    const leafDer = issueCertificate({
      subjectDer: csr.subjectDer, spkiDer: csr.spkiDer, issuer: intIssuer, notBefore: new Date(), notAfter: new Date(Date.now() + DAY), kind: 'client',
      sans: { uri: ['spiffe://td/identity/abc'] },
    });
    const leaf = new X509Certificate(leafDer);
    expect(leaf.ca).toBe(false);
    expect(leaf.checkIssued(int) && leaf.verify(int.publicKey)).toBe(true);
    expect(leaf.subject).toBe('CN=ident');
    expect(leaf.subjectAltName).toBe('URI:spiffe://td/identity/abc');
    expect(leaf.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(fingerprint(leafDer)).toBe(leaf.fingerprint.replace(/:/g, '').toLowerCase());
    // forge (an independent parser) reads the DER back
    const parsed = forge.asn1.fromDer(forge.util.createBuffer(leafDer.toString('binary')));
    expect(forge.asn1.toDer(parsed).getBytes()).toBe(leafDer.toString('binary'));
  });

  it('issues server certificates with DNS and IP SANs', () => {
    const { intIssuer } = smallPki();
    const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const der = issueCertificate({
      commonName: 'ctrl', spkiDer: spkiOf(keys.publicKey), issuer: intIssuer, notBefore: new Date(), notAfter: new Date(Date.now() + DAY), kind: 'server',
      sans: { dns: ['localhost', 'ctrl.example'], ip: ['127.0.0.1', '::1', 'fd00::12'] },
    });
    const cert = new X509Certificate(der);
    expect(cert.subjectAltName).toBe('DNS:localhost, DNS:ctrl.example, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, IP Address:FD00:0:0:0:0:0:0:12');
    expect(cert.checkHost('ctrl.example')).toBe('ctrl.example');
    expect(cert.checkPrivateKey(keys.privateKey)).toBe(true);
  });
});

describe('chain verification', () => {
  it('accepts leaf + intermediate up to the root, a bare leaf only with the intermediate as anchor, and rejects a foreign root', () => {
    const { rootDer, intDer, intIssuer } = smallPki();
    const other = smallPki();
    const csr = parseCsr(csrPem(ecKeyPair(), { commonName: 'x' }));
    const leaf = new X509Certificate(issueCertificate({ subjectDer: csr.subjectDer, spkiDer: csr.spkiDer, issuer: intIssuer, notBefore: new Date(), notAfter: new Date(Date.now() + DAY), kind: 'client' }));
    const root = new X509Certificate(rootDer);
    const int = new X509Certificate(intDer);
    expect(verifyChain(leaf, [int], [root])).toMatchObject({ ok: true, expired: false });
    expect(verifyChain(leaf, [], [root]).ok).toBe(false);
    expect(verifyChain(leaf, [], [root, int]).ok).toBe(true);
    expect(verifyChain(leaf, [int], [new X509Certificate(other.rootDer)]).ok).toBe(false);
    expect(verifyChain(leaf, [int], [root], Date.now() + 2 * DAY)).toMatchObject({ ok: true, expired: true });
  });

  it('verifies certificates of a third-party (forge-built, RSA) CA', () => {
    const ca = createTestCa();
    const leaf = new X509Certificate(ca.issue('device').certPem);
    expect(verifyChain(leaf, [], [new X509Certificate(ca.certPem)]).ok).toBe(true);
    expect(verifyChain(leaf, [], [new X509Certificate(createTestCa('Other').certPem)]).ok).toBe(false);
  });
});

describe('EST cacerts', () => {
  it('is base64 PKCS#7 certs-only in 64-character lines, holding the certificates in order', () => {
    const { rootDer, intDer } = smallPki();
    const body = estCaCertsBody([rootDer, intDer]);
    const lines = body.split('\n');
    expect(lines.slice(0, -1).every((l) => l.length === 64)).toBe(true);
    expect(lines[lines.length - 1]!.length).toBeLessThanOrEqual(64);
    const der = Buffer.from(body.replace(/\n/g, ''), 'base64');
    const p7 = forge.asn1.fromDer(forge.util.createBuffer(der.toString('binary')));
    const v = p7.value as forge.asn1.Asn1[];
    expect(forge.asn1.derToOid(forge.util.createBuffer(v[0]!.value as string))).toBe('1.2.840.113549.1.7.2');
    const signedData = (v[1]!.value as forge.asn1.Asn1[])[0]!.value as forge.asn1.Asn1[];
    const certs = (signedData[3]!.value as forge.asn1.Asn1[]).map((c) => Buffer.from(forge.asn1.toDer(c).getBytes(), 'binary'));
    expect(certs).toEqual([rootDer, intDer]);
  });
});

describe('key vault', () => {
  it('seals and opens a key, and refuses another secret or another row name', () => {
    const vault = new KeyVault('secret-a');
    const sealed = vault.seal('root', 'PEM DATA');
    expect(sealed).not.toContain('PEM DATA');
    expect(vault.open('root', sealed)).toBe('PEM DATA');
    expect(() => new KeyVault('secret-b').open('root', sealed)).toThrow(/ZITI_PKI_KEY/);
    expect(() => vault.open('server', sealed)).toThrow();
  });
});

describe('JWT signing', () => {
  it('signs with the key of a certificate: alg from the key, kid = SHA-1 of the certificate, no iat', async () => {
    const { intIssuer } = smallPki();
    const keys = ecKeyPair();
    const der = issueCertificate({ commonName: 'srv', spkiDer: spkiOf(keys.publicKey), issuer: intIssuer, notBefore: new Date(), notAfter: new Date(Date.now() + DAY), kind: 'server' });
    const signer = jwtSigner(keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), certPem(der));
    const jwt = await signJwt(signer, { sub: 'x', aud: [''], em: 'ott' });
    const header = decodeProtectedHeader(jwt);
    expect(header).toEqual({ alg: 'ES256', kid: fingerprint(der), typ: 'JWT' });
    const { payload } = await jwtVerify(jwt, new X509Certificate(der).publicKey, { audience: '' });
    expect(payload).toEqual({ sub: 'x', aud: [''], em: 'ott' });
    expect(createPrivateKey(signer.privateKey.export({ type: 'pkcs8', format: 'pem' }))).toBeTruthy();
  });
});

describe('externalId claims', () => {
  const ca = createTestCa();
  const cert = new X509Certificate(ca.issue('cn-value:part2', { uris: ['spiffe://example/device/42', 'https://other'], emails: ['dev@example.com'] }).certPem);
  const claim = (o: Partial<Parameters<typeof externalIdOf>[1]>) => ({ location: 'COMMON_NAME', matcher: 'ALL', matcherCriteria: '', parser: 'NONE', parserCriteria: '', index: 0, ...o });

  it('reads the common name, SAN URIs by scheme, SAN emails, split and indexed', () => {
    expect(externalIdOf(cert, claim({}))).toBe('cn-value:part2');
    expect(externalIdOf(cert, claim({ parser: 'SPLIT', parserCriteria: ':', index: 1 }))).toBe('part2');
    expect(externalIdOf(cert, claim({ location: 'SAN_URI', matcher: 'SCHEME', matcherCriteria: 'spiffe' }))).toBe('spiffe://example/device/42');
    expect(externalIdOf(cert, claim({ location: 'SAN_URI', index: 1 }))).toBe('https://other');
    expect(externalIdOf(cert, claim({ location: 'SAN_EMAIL', matcher: 'SUFFIX', matcherCriteria: '@example.com' }))).toBe('dev@example.com');
    expect(externalIdOf(cert, claim({ location: 'SAN_EMAIL', matcher: 'PREFIX', matcherCriteria: 'nobody' }))).toBeUndefined();
    expect(externalIdOf(cert, claim({ location: 'SAN_URI', matcher: 'PREFIX', matcherCriteria: 'x' }))).toBeUndefined();
  });
});
