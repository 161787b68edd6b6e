import { type KeyObject, X509Certificate, createHash, createPublicKey, randomBytes, sign } from 'node:crypto';
import { isIP } from 'node:net';
import { TAG, children, content, encodeOid, pemBlocks, raw, readTlv, tlv, toPem } from './der.js';

/**
 * X.509 v3 certificates, DER-encoded by hand (der.ts) and signed with Node's crypto: any subject
 * key a CSR can carry (EC, RSA, Ed25519) is certified as is (its SubjectPublicKeyInfo is copied),
 * and the controller's own keys (EC P-256) sign with ECDSA-SHA256.
 */

/** Subject alternative names, as requested or as issued. */
export interface Sans {
  dns: string[];
  ip: string[];
  uri: string[];
  email: string[];
}

export const emptySans = (): Sans => ({ dns: [], ip: [], uri: [], email: [] });

export type CertificateKind = 'root' | 'intermediate' | 'client' | 'server' | 'client-server';

export interface Issuer {
  /** The issuer's subject Name, DER. */
  nameDer: Buffer;
  privateKey: KeyObject;
  /** The issuer's SubjectPublicKeyInfo, DER (for the authority key identifier). */
  spkiDer: Buffer;
}

export interface IssueOptions {
  /** Subject Name, DER (e.g. copied from a CSR); or `commonName` to build one. */
  subjectDer?: Buffer;
  commonName?: string;
  /** The certified key's SubjectPublicKeyInfo, DER. */
  spkiDer: Buffer;
  /** Omit for a self-signed root (then `selfKey` signs). */
  issuer?: Issuer;
  selfKey?: KeyObject;
  notBefore: Date;
  notAfter: Date;
  kind: CertificateKind;
  /** CA path length constraint (intermediates). */
  pathLen?: number;
  sans?: Partial<Sans>;
}

const ORGANISATION = 'Ziti Controller';
const OID = {
  organization: '2.5.4.10',
  commonName: '2.5.4.3',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectKeyId: '2.5.29.14',
  authorityKeyId: '2.5.29.35',
  subjectAltName: '2.5.29.17',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
  ecdsaSha256: '1.2.840.10045.4.3.2',
  ecdsaSha384: '1.2.840.10045.4.3.3',
  rsaSha256: '1.2.840.113549.1.1.11',
  ed25519: '1.3.101.112',
};

const BOOLEAN_TRUE = tlv(0x01, Buffer.from([0xff]));
const NULL = tlv(0x05);

/** A Name of `O=Ziti Controller, CN=<commonName>`. */
export function nameDer(commonName: string, organisation = ORGANISATION): Buffer {
  const atv = (oid: string, value: string) => tlv(TAG.SET, tlv(TAG.SEQUENCE, encodeOid(oid), tlv(TAG.UTF8, Buffer.from(value, 'utf8'))));
  return tlv(TAG.SEQUENCE, atv(OID.organization, organisation), atv(OID.commonName, commonName));
}

/** The SubjectPublicKeyInfo (DER) of a key. */
export function spkiOf(key: KeyObject): Buffer {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return pub.export({ type: 'spki', format: 'der' });
}

/** RFC 5280 method 1 key identifier: SHA-1 of the subjectPublicKey bits. */
export function keyIdentifier(spkiDer: Buffer): Buffer {
  const [, bits] = children(spkiDer, readTlv(spkiDer));
  return createHash('sha1').update(content(spkiDer, bits!).subarray(1)).digest();
}

/** OpenZiti's certificate fingerprint: SHA-1 of the DER, lower-case hex without separators. */
export function fingerprint(der: Buffer): string {
  return createHash('sha1').update(der).digest('hex');
}

function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${iso}Z`));
}

function serialNumber(): Buffer {
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01;
  return tlv(TAG.INTEGER, serial);
}

/** The signature algorithm a key signs certificates with, and Node's hash name for it. */
function signatureAlgorithm(key: KeyObject): { algId: Buffer; hash: string | null } {
  switch (key.asymmetricKeyType) {
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === 'secp384r1') return { algId: tlv(TAG.SEQUENCE, encodeOid(OID.ecdsaSha384)), hash: 'sha384' };
      return { algId: tlv(TAG.SEQUENCE, encodeOid(OID.ecdsaSha256)), hash: 'sha256' };
    }
    case 'rsa':
      return { algId: tlv(TAG.SEQUENCE, encodeOid(OID.rsaSha256), NULL), hash: 'sha256' };
    case 'ed25519':
      return { algId: tlv(TAG.SEQUENCE, encodeOid(OID.ed25519)), hash: null };
    default:
      throw new Error(`unsupported signing key type ${key.asymmetricKeyType}`);
  }
}

/** A KeyUsage BIT STRING from bit numbers (0 = digitalSignature … 6 = cRLSign). */
function keyUsageBits(bits: number[]): Buffer {
  let byte = 0;
  for (const b of bits) byte |= 0x80 >> b;
  const last = Math.max(...bits);
  return tlv(TAG.BIT_STRING, Buffer.from([7 - last, byte]));
}

function extension(oid: string, critical: boolean, value: Buffer): Buffer {
  return tlv(TAG.SEQUENCE, encodeOid(oid), ...(critical ? [BOOLEAN_TRUE] : []), tlv(TAG.OCTET_STRING, value));
}

function generalNames(sans: Partial<Sans>): Buffer {
  const names: Buffer[] = [];
  for (const email of sans.email ?? []) names.push(tlv(0x81, Buffer.from(email, 'latin1')));
  for (const dns of sans.dns ?? []) names.push(tlv(0x82, Buffer.from(dns, 'latin1')));
  for (const uri of sans.uri ?? []) names.push(tlv(0x86, Buffer.from(uri, 'latin1')));
  for (const ip of sans.ip ?? []) names.push(tlv(0x87, ipBytes(ip)));
  return tlv(TAG.SEQUENCE, ...names);
}

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  const [head, tail] = ip.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail ? tail.split(':') : [];
  const groups = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g || '0', 16), i * 2));
  return out;
}

function extensions(o: IssueOptions, subjectKey: KeyObject, issuerSpki: Buffer): Buffer {
  const isCa = o.kind === 'root' || o.kind === 'intermediate';
  const exts: Buffer[] = [];
  const bc: Buffer[] = isCa ? [BOOLEAN_TRUE] : [];
  if (isCa && o.pathLen !== undefined) bc.push(tlv(TAG.INTEGER, Buffer.from([o.pathLen])));
  exts.push(extension(OID.basicConstraints, true, tlv(TAG.SEQUENCE, ...bc)));
  const encipher = subjectKey.asymmetricKeyType === 'rsa' ? 2 : subjectKey.asymmetricKeyType === 'ec' ? 4 : undefined;
  exts.push(extension(OID.keyUsage, true, keyUsageBits(isCa ? [0, 5, 6] : encipher === undefined ? [0] : [0, encipher])));
  if (!isCa) {
    const purposes = o.kind === 'client' ? [OID.clientAuth] : o.kind === 'server' ? [OID.serverAuth] : [OID.serverAuth, OID.clientAuth];
    exts.push(extension(OID.extKeyUsage, false, tlv(TAG.SEQUENCE, ...purposes.map(encodeOid))));
  }
  exts.push(extension(OID.subjectKeyId, false, tlv(TAG.OCTET_STRING, keyIdentifier(o.spkiDer))));
  exts.push(extension(OID.authorityKeyId, false, tlv(TAG.SEQUENCE, tlv(0x80, keyIdentifier(issuerSpki)))));
  const sans = o.sans ?? {};
  if ((sans.dns?.length ?? 0) + (sans.ip?.length ?? 0) + (sans.uri?.length ?? 0) + (sans.email?.length ?? 0) > 0) {
    exts.push(extension(OID.subjectAltName, false, generalNames(sans)));
  }
  return tlv(0xa3, tlv(TAG.SEQUENCE, ...exts));
}

/** Issues (or self-signs) one certificate; returns its DER. */
export function issueCertificate(o: IssueOptions): Buffer {
  const signingKey = o.issuer?.privateKey ?? o.selfKey;
  if (!signingKey) throw new Error('issueCertificate: an issuer or selfKey is required');
  const subjectName = o.subjectDer ?? nameDer(o.commonName ?? '');
  const issuerName = o.issuer?.nameDer ?? subjectName;
  const issuerSpki = o.issuer?.spkiDer ?? o.spkiDer;
  const subjectKey = createPublicKey({ key: o.spkiDer, format: 'der', type: 'spki' });
  const { algId, hash } = signatureAlgorithm(signingKey);
  const tbs = tlv(
    TAG.SEQUENCE,
    tlv(0xa0, tlv(TAG.INTEGER, Buffer.from([2]))),
    serialNumber(),
    algId,
    issuerName,
    tlv(TAG.SEQUENCE, time(o.notBefore), time(o.notAfter)),
    subjectName,
    o.spkiDer,
    extensions(o, subjectKey, issuerSpki),
  );
  const signature = sign(hash, tbs, signingKey);
  return tlv(TAG.SEQUENCE, tbs, algId, tlv(TAG.BIT_STRING, Buffer.from([0]), signature));
}

export const certPem = (der: Buffer) => toPem('CERTIFICATE', der);

/** The subject Name of a certificate (DER), byte-exact. */
export function certSubjectDer(der: Buffer): Buffer {
  const [tbs] = children(der, readTlv(der));
  const fields = children(der, tbs!);
  const offset = fields[0]!.tag === 0xa0 ? 1 : 0;
  return Buffer.from(raw(der, fields[offset + 4]!));
}

/** Every certificate of a PEM bundle, as DER, in order. */
export function pemCertificates(text: string): Buffer[] {
  return pemBlocks(text, ['CERTIFICATE']);
}

/** The subject as Go's pkix.Name.String() prints it (`CN=x,O=y`, most specific first). */
export function subjectString(cert: X509Certificate): string {
  return cert.subject
    .split('\n')
    .filter((l) => l.length > 0)
    .reverse()
    .join(',');
}
