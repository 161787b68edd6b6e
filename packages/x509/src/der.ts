/**
 * A minimal DER reader and writer: enough to take CSRs and certificates apart byte-exactly (the
 * signed part of a CSR must be verified over its original bytes) and to build the PKCS#7 bundle.
 * Certificates themselves are assembled with node-forge's ASN.1 (see x509.ts).
 */

export interface Tlv {
  tag: number;
  /** Offset of the tag byte in the buffer. */
  start: number;
  /** Offset of the first content byte. */
  contentStart: number;
  /** Offset just past the content. */
  end: number;
}

export class DerError extends Error {}

/** Reads one TLV at `offset`. Only definite lengths (DER). */
export function readTlv(buf: Buffer, offset = 0): Tlv {
  if (offset + 2 > buf.length) throw new DerError('truncated DER');
  const tag = buf[offset]!;
  if ((tag & 0x1f) === 0x1f) throw new DerError('multi-byte tags are not supported');
  let len = buf[offset + 1]!;
  let p = offset + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4) throw new DerError('unsupported DER length');
    if (p + n > buf.length) throw new DerError('truncated DER length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[p + i]!;
    p += n;
  }
  if (p + len > buf.length) throw new DerError('truncated DER content');
  return { tag, start: offset, contentStart: p, end: p + len };
}

/** The children of a constructed TLV. */
export function children(buf: Buffer, parent: Tlv): Tlv[] {
  const out: Tlv[] = [];
  let p = parent.contentStart;
  while (p < parent.end) {
    const t = readTlv(buf, p);
    out.push(t);
    p = t.end;
  }
  if (p !== parent.end) throw new DerError('malformed DER structure');
  return out;
}

export const raw = (buf: Buffer, t: Tlv) => buf.subarray(t.start, t.end);
export const content = (buf: Buffer, t: Tlv) => buf.subarray(t.contentStart, t.end);

/** Decodes an OBJECT IDENTIFIER's content. */
export function decodeOid(bytes: Buffer): string {
  if (bytes.length === 0) throw new DerError('empty OID');
  const first = bytes[0]!;
  const parts = [Math.min(2, Math.floor(first / 40)), first >= 80 ? first - 80 : first % 40];
  let v = 0;
  for (let i = 1; i < bytes.length; i++) {
    v = v * 128 + (bytes[i]! & 0x7f);
    if (!(bytes[i]! & 0x80)) {
      parts.push(v);
      v = 0;
    }
  }
  return parts.join('.');
}

/** One TLV with the given tag and content. */
export function tlv(tag: number, ...contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  const len = body.length;
  let header: Buffer;
  if (len < 0x80) header = Buffer.from([tag, len]);
  else {
    const bytes: number[] = [];
    for (let n = len; n > 0; n = Math.floor(n / 256)) bytes.unshift(n % 256);
    header = Buffer.from([tag, 0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([header, body]);
}

export function encodeOid(oid: string): Buffer {
  const parts = oid.split('.').map(Number);
  const out: number[] = [parts[0]! * 40 + parts[1]!];
  for (const n of parts.slice(2)) {
    const chunk: number[] = [n & 0x7f];
    for (let v = Math.floor(n / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

export const TAG = {
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  OID: 0x06,
  UTF8: 0x0c,
  PRINTABLE: 0x13,
  T61: 0x14,
  IA5: 0x16,
  BMP: 0x1e,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

/** A string value of a Name attribute (UTF8, Printable, IA5, T61, BMP). */
export function decodeString(buf: Buffer, t: Tlv): string {
  const c = content(buf, t);
  if (t.tag === TAG.BMP) {
    let s = '';
    for (let i = 0; i + 1 < c.length; i += 2) s += String.fromCharCode(c.readUInt16BE(i));
    return s;
  }
  return t.tag === TAG.UTF8 ? c.toString('utf8') : c.toString('latin1');
}

/** PEM blocks of the given label(s) in a text, as DER. */
export function pemBlocks(text: string, labels: readonly string[]): Buffer[] {
  const out: Buffer[] = [];
  const re = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (labels.includes(m[1]!)) out.push(Buffer.from(m[2]!.replace(/[^A-Za-z0-9+/=]/g, ''), 'base64'));
  }
  return out;
}

/** DER → PEM with 64-character lines and a trailing newline. */
export function toPem(label: string, der: Buffer): string {
  const b64 = der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}
