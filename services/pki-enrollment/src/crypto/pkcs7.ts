import { TAG, encodeOid, tlv } from '@ziti/x509';

const OID_SIGNED_DATA = '1.2.840.113549.1.7.2';
const OID_DATA = '1.2.840.113549.1.7.1';

/**
 * A degenerate PKCS#7 SignedData ("certs-only": no content, no signers) holding the given
 * certificates (DER), as `pkcs7.DegenerateCertificate` builds it for EST `/cacerts`.
 */
export function degenerateCertsOnly(certsDer: readonly Buffer[]): Buffer {
  const signedData = tlv(
    TAG.SEQUENCE,
    tlv(TAG.INTEGER, Buffer.from([1])),
    tlv(TAG.SET),
    tlv(TAG.SEQUENCE, encodeOid(OID_DATA)),
    tlv(0xa0, ...certsDer),
    tlv(TAG.SET),
  );
  return tlv(TAG.SEQUENCE, encodeOid(OID_SIGNED_DATA), tlv(0xa0, signedData));
}

/** The EST `/cacerts` body: base64 of the PKCS#7 bundle in 64-character lines joined by `\n` (no final newline). */
export function estCaCertsBody(certsDer: readonly Buffer[]): string {
  return degenerateCertsOnly(certsDer).toString('base64').replace(/(.{64})(?=.)/g, '$1\n');
}
