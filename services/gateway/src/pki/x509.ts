import { type KeyObject, createHash, randomBytes, sign } from 'node:crypto';
import { isIP } from 'node:net';
import forge from 'node-forge';

/**
 * X.509 certificates with EC P-256 keys.
 *
 * node-forge builds and signs only RSA certificates, so forge is used here for what it does well
 * (ASN.1/DER encoding, names and extensions) and Node's crypto for the keys and the ECDSA-SHA256
 * signature: the TBSCertificate is assembled with `forge.asn1`, signed with `crypto.sign`, and
 * wrapped into the final certificate.
 */

const { asn1, pki } = forge;
const U = asn1.Class.UNIVERSAL;
const CTX = asn1.Class.CONTEXT_SPECIFIC;
const T = asn1.Type;

const OID_EC_PUBLIC_KEY = '1.2.840.10045.2.1';
const OID_P256 = '1.2.840.10045.3.1.7';
const OID_ECDSA_SHA256 = '1.2.840.10045.4.3.2';

export interface CertificateRequest {
  /** Subject common name (and organisation, fixed). */
  commonName: string;
  /** The certified public key (EC P-256). */
  publicKey: KeyObject;
  /** Issuer: its subject common name, private key and public key; omit for a self-signed CA. */
  issuer?: { commonName: string; privateKey: KeyObject; publicKey: KeyObject };
  /** Self-signed: the subject's private key. */
  selfPrivateKey?: KeyObject;
  notBefore: Date;
  notAfter: Date;
  isCa: boolean;
  /** Subject alternative names: DNS names or IP addresses. */
  sans?: readonly string[];
}

const ORGANISATION = 'Ziti Controller';

const oid = (id: string) => asn1.create(U, T.OID, false, asn1.oidToDer(id).getBytes());
const bytes = (buf: Buffer) => buf.toString('binary');

/** The uncompressed EC point of a P-256 public key. */
function ecPoint(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' });
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || !jwk.x || !jwk.y) throw new Error('an EC P-256 public key is required');
  return Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x, 'base64url'), Buffer.from(jwk.y, 'base64url')]);
}

/** RFC 5280 method 1 key identifier: SHA-1 of the subjectPublicKey bits. */
export function keyIdentifier(key: KeyObject): Buffer {
  return createHash('sha1').update(ecPoint(key)).digest();
}

function subjectPublicKeyInfo(key: KeyObject) {
  return asn1.create(U, T.SEQUENCE, true, [
    asn1.create(U, T.SEQUENCE, true, [oid(OID_EC_PUBLIC_KEY), oid(OID_P256)]),
    asn1.create(U, T.BITSTRING, false, '\x00' + bytes(ecPoint(key))),
  ]);
}

function name(commonName: string) {
  return pki.distinguishedNameToAsn1({
    attributes: [
      { type: pki.oids.organizationName, value: ORGANISATION, valueTagClass: T.UTF8 },
      { type: pki.oids.commonName, value: commonName, valueTagClass: T.UTF8 },
    ],
  } as never);
}

function time(d: Date) {
  return d.getUTCFullYear() < 2050
    ? asn1.create(U, T.UTCTIME, false, asn1.dateToUtcTime(d))
    : asn1.create(U, T.GENERALIZEDTIME, false, asn1.dateToGeneralizedTime(d));
}

function serialNumber(): string {
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01; // positive and without a leading zero byte
  return bytes(serial);
}

function extensions(req: CertificateRequest, issuerKey: KeyObject): forge.pki.CertificateField[] {
  const exts: Record<string, unknown>[] = [
    { name: 'basicConstraints', cA: req.isCa, critical: true },
    req.isCa
      ? { name: 'keyUsage', critical: true, keyCertSign: true, cRLSign: true, digitalSignature: true }
      : { name: 'keyUsage', critical: true, digitalSignature: true, keyAgreement: true },
    {
      name: 'subjectKeyIdentifier',
      value: asn1.create(U, T.OCTETSTRING, false, bytes(keyIdentifier(req.publicKey))),
    },
    {
      name: 'authorityKeyIdentifier',
      value: asn1.create(U, T.SEQUENCE, true, [asn1.create(CTX, 0, false, bytes(keyIdentifier(issuerKey)))]),
    },
  ];
  if (!req.isCa) exts.push({ name: 'extKeyUsage', serverAuth: true, clientAuth: true });
  if (req.sans && req.sans.length > 0) {
    exts.push({
      name: 'subjectAltName',
      altNames: req.sans.map((san) => (isIP(san) ? { type: 7, ip: san } : { type: 2, value: san })),
    });
  }
  // Let forge fill in the DER values of the standard extensions.
  const holder = pki.createCertificate();
  holder.setExtensions(exts);
  return holder.extensions as forge.pki.CertificateField[];
}

/** Issues (or self-signs) one certificate; returns it as PEM. */
export function issueCertificate(req: CertificateRequest): string {
  const issuerName = req.issuer ? req.issuer.commonName : req.commonName;
  const signingKey = req.issuer ? req.issuer.privateKey : req.selfPrivateKey;
  const issuerPublicKey = req.issuer ? req.issuer.publicKey : req.publicKey;
  if (!signingKey) throw new Error('issueCertificate: an issuer or selfPrivateKey is required');

  const algorithm = asn1.create(U, T.SEQUENCE, true, [oid(OID_ECDSA_SHA256)]);
  const tbs = asn1.create(U, T.SEQUENCE, true, [
    asn1.create(CTX, 0, true, [asn1.create(U, T.INTEGER, false, asn1.integerToDer(2).getBytes())]),
    asn1.create(U, T.INTEGER, false, serialNumber()),
    algorithm,
    name(issuerName),
    asn1.create(U, T.SEQUENCE, true, [time(req.notBefore), time(req.notAfter)]),
    name(req.commonName),
    subjectPublicKeyInfo(req.publicKey),
    // Present in node-forge, missing from its type declarations.
    (pki as unknown as { certificateExtensionsToAsn1(exts: unknown[]): forge.asn1.Asn1 }).certificateExtensionsToAsn1(extensions(req, issuerPublicKey)),
  ]);
  const tbsDer = Buffer.from(asn1.toDer(tbs).getBytes(), 'binary');
  const signature = sign('sha256', tbsDer, signingKey); // DER-encoded ECDSA-Sig-Value
  const cert = asn1.create(U, T.SEQUENCE, true, [
    tbs,
    asn1.create(U, T.SEQUENCE, true, [oid(OID_ECDSA_SHA256)]),
    asn1.create(U, T.BITSTRING, false, '\x00' + bytes(signature)),
  ]);
  const der = asn1.toDer(cert).getBytes();
  return forge.pem.encode({ type: 'CERTIFICATE', body: der }, { maxline: 64 }).replace(/\r\n/g, '\n');
}
