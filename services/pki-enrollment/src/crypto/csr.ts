import { type KeyObject, createPublicKey, verify } from 'node:crypto';
import { isIP } from 'node:net';
import { type Tlv, TAG, children, content, decodeOid, decodeString, pemBlocks, raw, readTlv } from '@ziti/x509';

import { type Sans, emptySans } from '@ziti/x509';

export { type Sans, emptySans };

/** A parsed, signature-checked PKCS#10 certificate signing request. */
export interface Csr {
  der: Buffer;
  /** The subject Name, DER, byte-exact (copied into the issued certificate). */
  subjectDer: Buffer;
  commonName: string;
  /** SubjectPublicKeyInfo, DER. */
  spkiDer: Buffer;
  publicKey: KeyObject;
  /** SANs requested through the extensionRequest attribute. */
  sans: Sans;
}

export class CsrError extends Error {}

const OID_EXTENSION_REQUEST = '1.2.840.113549.1.9.14';
const OID_SAN = '2.5.29.17';
const OID_CN = '2.5.4.3';

/** Hash of a signature algorithm OID (null for Ed25519/Ed448). */
export const SIGNATURE_HASHES: Record<string, string | null> = {
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.2.840.113549.1.1.5': 'sha1',
  '1.3.101.112': null,
  '1.3.101.113': null,
};

/** The common name of a DER Name ('' when it has none). */
export function commonNameOf(nameDer: Buffer): string {
  const name = readTlv(nameDer);
  for (const rdn of children(nameDer, name)) {
    for (const atv of children(nameDer, rdn)) {
      const [oid, value] = children(nameDer, atv);
      if (oid && value && decodeOid(content(nameDer, oid)) === OID_CN) return decodeString(nameDer, value);
    }
  }
  return '';
}

/** GeneralNames (the SAN extension value) → SANs. */
export function parseGeneralNames(der: Buffer): Sans {
  const sans = emptySans();
  for (const gn of children(der, readTlv(der))) {
    const c = content(der, gn);
    switch (gn.tag) {
      case 0x81:
        sans.email.push(c.toString('latin1'));
        break;
      case 0x82:
        sans.dns.push(c.toString('latin1'));
        break;
      case 0x86:
        sans.uri.push(c.toString('latin1'));
        break;
      case 0x87:
        if (c.length === 4) sans.ip.push([...c].join('.'));
        else if (c.length === 16) sans.ip.push(ipv6(c));
        break;
      default:
        break;
    }
  }
  return sans;
}

function ipv6(bytes: Buffer): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  const text = groups.join(':');
  return isIP(text) ? new URL(`http://[${text}]/`).hostname.slice(1, -1) : text;
}

function requestedSans(buf: Buffer, attributes: Tlv | undefined): Sans {
  if (!attributes) return emptySans();
  for (const attr of children(buf, attributes)) {
    const [oid, values] = children(buf, attr);
    if (!oid || !values || decodeOid(content(buf, oid)) !== OID_EXTENSION_REQUEST) continue;
    for (const exts of children(buf, values)) {
      for (const ext of children(buf, exts)) {
        const parts = children(buf, ext);
        const extOid = decodeOid(content(buf, parts[0]!));
        const value = parts[parts.length - 1]!;
        if (extOid === OID_SAN && value.tag === TAG.OCTET_STRING) return parseGeneralNames(Buffer.from(content(buf, value)));
      }
    }
  }
  return emptySans();
}

/**
 * Parses a PEM (or DER) PKCS#10 request and checks its self-signature. EC (P-256/384/521), RSA
 * and Ed25519 keys are accepted. Throws CsrError on anything malformed or unsigned.
 */
export function parseCsr(input: string | Buffer): Csr {
  let der: Buffer;
  if (Buffer.isBuffer(input) && input[0] === TAG.SEQUENCE) der = input;
  else {
    const text = Buffer.isBuffer(input) ? input.toString('utf8') : input;
    const blocks = pemBlocks(text, ['CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST']);
    if (blocks.length === 0) throw new CsrError('no PEM certificate request found');
    der = blocks[0]!;
  }
  try {
    const outer = readTlv(der);
    if (outer.tag !== TAG.SEQUENCE || outer.end !== der.length) throw new CsrError('not a certificate request');
    const [info, alg, sig] = children(der, outer);
    if (!info || !alg || !sig || sig.tag !== TAG.BIT_STRING) throw new CsrError('not a certificate request');
    const [version, subject, spki, attributes] = children(der, info);
    if (!version || !subject || !spki || version.tag !== TAG.INTEGER) throw new CsrError('not a certificate request');
    const spkiDer = Buffer.from(raw(der, spki));
    const publicKey = createPublicKey({ key: spkiDer, format: 'der', type: 'spki' });
    const algOid = decodeOid(content(der, children(der, alg)[0]!));
    if (!(algOid in SIGNATURE_HASHES)) throw new CsrError(`unsupported signature algorithm ${algOid}`);
    const signature = content(der, sig).subarray(1);
    if (!verify(SIGNATURE_HASHES[algOid] ?? null, raw(der, info), publicKey, signature)) throw new CsrError('the request signature does not verify');
    const subjectDer = Buffer.from(raw(der, subject));
    return {
      der,
      subjectDer,
      commonName: commonNameOf(subjectDer),
      spkiDer,
      publicKey,
      sans: requestedSans(der, attributes && attributes.tag === 0xa0 ? attributes : undefined),
    };
  } catch (err) {
    if (err instanceof CsrError) throw err;
    throw new CsrError(`could not parse the certificate request: ${(err as Error).message}`);
  }
}
