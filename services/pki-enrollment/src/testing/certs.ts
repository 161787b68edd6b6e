// Test helpers: keys, CSRs and a third-party CA built with node-forge and Node's crypto,
// independently of this service's own DER code. Not used by the service itself.
import { type KeyObject, generateKeyPairSync, sign } from 'node:crypto';
import forge from 'node-forge';

const { asn1, pki } = forge;
const U = asn1.Class.UNIVERSAL;
const T = asn1.Type;

export interface KeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
}

export const ecKeyPair = (curve = 'P-256'): KeyPair => generateKeyPairSync('ec', { namedCurve: curve });
export const rsaKeyPair = (): KeyPair => generateKeyPairSync('rsa', { modulusLength: 2048 });

export interface CsrOptions {
  commonName?: string;
  organisation?: string;
  dns?: string[];
  ips?: string[];
  uris?: string[];
}

function subject(o: CsrOptions) {
  const attrs: { type: string; value: string; valueTagClass?: number }[] = [];
  if (o.organisation) attrs.push({ type: pki.oids.organizationName!, value: o.organisation, valueTagClass: T.UTF8 });
  if (o.commonName !== undefined) attrs.push({ type: pki.oids.commonName!, value: o.commonName, valueTagClass: T.UTF8 });
  return pki.distinguishedNameToAsn1({ attributes: attrs } as never);
}

function altNames(o: CsrOptions) {
  return [
    ...(o.dns ?? []).map((value) => ({ type: 2, value })),
    ...(o.ips ?? []).map((ip) => ({ type: 7, ip })),
    ...(o.uris ?? []).map((value) => ({ type: 6, value })),
  ];
}

/**
 * A PEM PKCS#10 request for `keys`. Any key type Node signs with (EC, RSA, Ed25519): the
 * request is assembled with forge's ASN.1 and signed with Node's crypto.
 */
export function csrPem(keys: KeyPair, o: CsrOptions = {}): string {
  const spki = asn1.fromDer(forge.util.createBuffer(keys.publicKey.export({ type: 'spki', format: 'der' }).toString('binary')), {
    decodeBitStrings: false,
  } as never);
  const sanList = altNames(o);
  const attributes: forge.asn1.Asn1[] = [];
  if (sanList.length > 0) {
    const holder = pki.createCertificate();
    holder.setExtensions([{ name: 'subjectAltName', altNames: sanList }]);
    const exts = (pki as unknown as { certificateExtensionsToAsn1(e: unknown[]): forge.asn1.Asn1 }).certificateExtensionsToAsn1(holder.extensions);
    attributes.push(
      asn1.create(U, T.SEQUENCE, true, [
        asn1.create(U, T.OID, false, asn1.oidToDer('1.2.840.113549.1.9.14').getBytes()),
        asn1.create(U, T.SET, true, [(exts.value as forge.asn1.Asn1[])[0]!]),
      ]),
    );
  }
  const info = asn1.create(U, T.SEQUENCE, true, [
    asn1.create(U, T.INTEGER, false, asn1.integerToDer(0).getBytes()),
    subject(o),
    spki,
    asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, attributes),
  ]);
  const infoDer = Buffer.from(asn1.toDer(info).getBytes(), 'binary');
  const type = keys.privateKey.asymmetricKeyType;
  const algOid = type === 'ec' ? '1.2.840.10045.4.3.2' : type === 'rsa' ? '1.2.840.113549.1.1.11' : '1.3.101.112';
  const sig = sign(type === 'ed25519' ? null : 'sha256', infoDer, keys.privateKey);
  const algParts = [asn1.create(U, T.OID, false, asn1.oidToDer(algOid).getBytes())];
  if (type === 'rsa') algParts.push(asn1.create(U, T.NULL, false, ''));
  const csr = asn1.create(U, T.SEQUENCE, true, [
    info,
    asn1.create(U, T.SEQUENCE, true, algParts),
    asn1.create(U, T.BITSTRING, false, `\x00${sig.toString('binary')}`),
  ]);
  return forge.pem.encode({ type: 'CERTIFICATE REQUEST', body: asn1.toDer(csr).getBytes() }).replace(/\r\n/g, '\n');
}

/** A third-party CA (RSA, forge-signed) that can issue client certificates. */
export interface TestCa {
  name: string;
  certPem: string;
  keyPem: string;
  issue(commonName: string, o?: { uris?: string[]; emails?: string[]; notAfter?: Date; notBefore?: Date; isCa?: boolean }): { certPem: string; keyPem: string };
}

function serial(): string {
  return `01${forge.util.bytesToHex(forge.random.getBytesSync(15))}`;
}

export function createTestCa(commonName = 'Test Third-Party CA', parent?: TestCa): TestCa {
  const keys = rsaKeyPair();
  const key = pki.privateKeyFromPem(keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
  const pub = pki.publicKeyFromPem(keys.publicKey.export({ type: 'spki', format: 'pem' }).toString());
  const cert = pki.createCertificate();
  cert.publicKey = pub;
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(Date.now() - 3600_000);
  cert.validity.notAfter = new Date(Date.now() + 365 * 24 * 3600_000);
  const attrs = [{ name: 'commonName', value: commonName }, { name: 'organizationName', value: 'Third Party' }];
  cert.setSubject(attrs);
  const issuerCert = parent ? pki.certificateFromPem(parent.certPem) : cert;
  cert.setIssuer(issuerCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(parent ? pki.privateKeyFromPem(parent.keyPem) : key, forge.md.sha256.create());
  const certPem = pki.certificateToPem(cert).replace(/\r\n/g, '\n');
  const keyPem = pki.privateKeyToPem(key).replace(/\r\n/g, '\n');
  return {
    name: commonName,
    certPem,
    keyPem,
    issue(cn, o = {}) {
      const leafKeys = rsaKeyPair();
      const leaf = pki.createCertificate();
      leaf.publicKey = pki.publicKeyFromPem(leafKeys.publicKey.export({ type: 'spki', format: 'pem' }).toString());
      leaf.serialNumber = serial();
      leaf.validity.notBefore = o.notBefore ?? new Date(Date.now() - 3600_000);
      leaf.validity.notAfter = o.notAfter ?? new Date(Date.now() + 30 * 24 * 3600_000);
      leaf.setSubject([{ name: 'commonName', value: cn }]);
      leaf.setIssuer(cert.subject.attributes);
      const alt = [...(o.uris ?? []).map((value) => ({ type: 6, value })), ...(o.emails ?? []).map((value) => ({ type: 1, value }))];
      leaf.setExtensions([
        { name: 'basicConstraints', cA: !!o.isCa },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
        { name: 'extKeyUsage', clientAuth: true },
        ...(alt.length > 0 ? [{ name: 'subjectAltName', altNames: alt }] : []),
      ]);
      leaf.sign(key, forge.md.sha256.create());
      return {
        certPem: pki.certificateToPem(leaf).replace(/\r\n/g, '\n'),
        keyPem: leafKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      };
    },
  };
}
