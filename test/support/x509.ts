import { type KeyObject, X509Certificate, generateKeyPairSync, sign } from 'node:crypto';
import { connect } from 'node:tls';
import forge from 'node-forge';

/**
 * Keys, CSRs and third-party CAs for the PKI black-box tests, as an SDK or an administrator would
 * make them: node-forge for ASN.1 (and RSA certificates), Node's crypto for keys and signatures.
 * Verification helpers use Node's X509Certificate only (independent of the controller's code).
 */

const { asn1, pki } = forge;
const U = asn1.Class.UNIVERSAL;
const T = asn1.Type;

export interface KeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
}

export const ecKeys = (): KeyPair => generateKeyPairSync('ec', { namedCurve: 'P-256' });
export const rsaKeys = (): KeyPair => generateKeyPairSync('rsa', { modulusLength: 2048 });
export const keyPem = (k: KeyPair) => k.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

/** A PEM PKCS#10 request (EC or RSA key), with an optional common name and SANs. */
export function csrPem(keys: KeyPair, o: { commonName?: string; dns?: string[]; ips?: string[] } = {}): string {
  const spki = asn1.fromDer(forge.util.createBuffer(keys.publicKey.export({ type: 'spki', format: 'der' }).toString('binary')), {
    decodeBitStrings: false,
  } as never);
  const attrs = o.commonName !== undefined ? [{ type: pki.oids.commonName!, value: o.commonName, valueTagClass: T.UTF8 }] : [];
  const attributes: forge.asn1.Asn1[] = [];
  const alt = [...(o.dns ?? []).map((value) => ({ type: 2, value })), ...(o.ips ?? []).map((ip) => ({ type: 7, ip }))];
  if (alt.length > 0) {
    const holder = pki.createCertificate();
    holder.setExtensions([{ name: 'subjectAltName', altNames: alt }]);
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
    pki.distinguishedNameToAsn1({ attributes: attrs } as never),
    spki,
    asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, attributes),
  ]);
  const infoDer = Buffer.from(asn1.toDer(info).getBytes(), 'binary');
  const rsa = keys.privateKey.asymmetricKeyType === 'rsa';
  const alg = [asn1.create(U, T.OID, false, asn1.oidToDer(rsa ? '1.2.840.113549.1.1.11' : '1.2.840.10045.4.3.2').getBytes())];
  if (rsa) alg.push(asn1.create(U, T.NULL, false, ''));
  const csr = asn1.create(U, T.SEQUENCE, true, [
    info,
    asn1.create(U, T.SEQUENCE, true, alg),
    asn1.create(U, T.BITSTRING, false, `\x00${sign('sha256', infoDer, keys.privateKey).toString('binary')}`),
  ]);
  return forge.pem.encode({ type: 'CERTIFICATE REQUEST', body: asn1.toDer(csr).getBytes() }).replace(/\r\n/g, '\n');
}

/** Every certificate of a PEM bundle. */
export function certificates(pem: string): X509Certificate[] {
  return [...pem.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)].map((m) => new X509Certificate(m[0]));
}

/** Lower-case hex SHA-1 of a certificate's DER (OpenZiti's fingerprint). */
export const fingerprintOf = (c: X509Certificate) => c.fingerprint.replace(/:/g, '').toLowerCase();

/** True when `leaf` chains through `chain` (in order) up to `root`, every signature checked. */
export function chainsTo(leaf: X509Certificate, chain: X509Certificate[], root: X509Certificate): boolean {
  let current = leaf;
  for (const next of [...chain, root]) {
    if (!current.checkIssued(next) || !current.verify(next.publicKey)) return false;
    current = next;
  }
  return true;
}

/** The TLS certificate a server presents at `host:port`, as an SDK fetches it to verify an enrollment JWT. */
export function servedCertificate(host: string, port: number): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, servername: host === '127.0.0.1' ? undefined : host, rejectUnauthorized: false }, () => {
      const cert = socket.getPeerCertificate();
      socket.end();
      resolve(new X509Certificate(cert.raw));
    });
    socket.on('error', reject);
  });
}

/** A third-party CA (RSA, forge-signed) issuing client certificates. */
export interface ThirdPartyCa {
  certPem: string;
  /** A client certificate (PEM) for `commonName` and its key (PEM). */
  issue(commonName: string, o?: { uris?: string[]; notAfter?: Date }): { certPem: string; keyPem: string };
}

export function thirdPartyCa(commonName = 'Third-Party Test CA'): ThirdPartyCa {
  const keys = rsaKeys();
  const key = pki.privateKeyFromPem(keyPem(keys));
  const cert = pki.createCertificate();
  cert.publicKey = pki.publicKeyFromPem(keys.publicKey.export({ type: 'spki', format: 'pem' }).toString());
  cert.serialNumber = `01${forge.util.bytesToHex(forge.random.getBytesSync(12))}`;
  cert.validity.notBefore = new Date(Date.now() - 3600_000);
  cert.validity.notAfter = new Date(Date.now() + 30 * 24 * 3600_000);
  cert.setSubject([{ name: 'commonName', value: commonName }]);
  cert.setIssuer([{ name: 'commonName', value: commonName }]);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
  ]);
  cert.sign(key, forge.md.sha256.create());
  return {
    certPem: pki.certificateToPem(cert).replace(/\r\n/g, '\n'),
    issue(cn, o = {}) {
      const leafKeys = rsaKeys();
      const leaf = pki.createCertificate();
      leaf.publicKey = pki.publicKeyFromPem(leafKeys.publicKey.export({ type: 'spki', format: 'pem' }).toString());
      leaf.serialNumber = `01${forge.util.bytesToHex(forge.random.getBytesSync(12))}`;
      leaf.validity.notBefore = new Date(Date.now() - 3600_000);
      leaf.validity.notAfter = o.notAfter ?? new Date(Date.now() + 7 * 24 * 3600_000);
      leaf.setSubject([{ name: 'commonName', value: cn }]);
      leaf.setIssuer(cert.subject.attributes);
      leaf.setExtensions([
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
        { name: 'extKeyUsage', clientAuth: true },
        ...(o.uris?.length ? [{ name: 'subjectAltName', altNames: o.uris.map((value) => ({ type: 6, value })) }] : []),
      ]);
      leaf.sign(key, forge.md.sha256.create());
      return { certPem: pki.certificateToPem(leaf).replace(/\r\n/g, '\n'), keyPem: keyPem(leafKeys) };
    },
  };
}

/** The certificates of a base64 PKCS#7 certs-only bundle (EST `/cacerts`), parsed with forge's ASN.1. */
export function pkcs7Certificates(base64: string): X509Certificate[] {
  const der = Buffer.from(base64.replace(/\s/g, ''), 'base64');
  const p7 = asn1.fromDer(forge.util.createBuffer(der.toString('binary')));
  const [oid, content] = p7.value as forge.asn1.Asn1[];
  if (asn1.derToOid(forge.util.createBuffer(oid!.value as string)) !== '1.2.840.113549.1.7.2') throw new Error('not PKCS#7 signedData');
  const signedData = (content!.value as forge.asn1.Asn1[])[0]!.value as forge.asn1.Asn1[];
  const certs = signedData.find((n) => n.tagClass === asn1.Class.CONTEXT_SPECIFIC && n.type === 0)!;
  return (certs.value as forge.asn1.Asn1[]).map((c) => new X509Certificate(Buffer.from(asn1.toDer(c).getBytes(), 'binary')));
}
