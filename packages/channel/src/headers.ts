// Header value encodings of openziti/channel message.go, each decoder bounds-checked: a malformed
// value throws HeaderValueError, never reads past its buffer. `get*` return undefined when the
// header is absent.
import { HeaderValueError } from './errors.js';
import type { Headers } from './frame.js';

/** OpenZiti's limits for string slices and maps (`DecodeStringSlice`, `DecodeU32ToBytesMap`, `DecodeString`). */
export const MAX_COLLECTION_ENTRIES = 128;
export const MAX_COLLECTION_ENTRY_BYTES = 8192;

const u32 = (n: number) => {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32LE(n >>> 0, 0);
  return b;
};

function fixed(value: Buffer, size: number, kind: string, header?: number): void {
  if (value.length !== size) throw new HeaderValueError(header, `${kind} must be ${size} bytes, got ${value.length}`);
}

export const encodeString = (s: string): Buffer => Buffer.from(s, 'utf8');
export const decodeString = (b: Buffer): string => b.toString('utf8');

export const encodeBool = (v: boolean): Buffer => Buffer.from([v ? 1 : 0]);
/** True iff the first byte is 1 (an empty value is false), as OpenZiti reads it. */
export const decodeBool = (b: Buffer): boolean => b.length > 0 && b[0] === 1;

export const encodeByte = (v: number): Buffer => Buffer.from([v & 0xff]);
export function decodeByte(b: Buffer, header?: number): number {
  if (b.length < 1) throw new HeaderValueError(header, 'byte value is empty');
  return b[0]!;
}

export function encodeUint16(v: number): Buffer {
  const b = Buffer.allocUnsafe(2);
  b.writeUInt16LE(v & 0xffff, 0);
  return b;
}
export function decodeUint16(b: Buffer, header?: number): number {
  fixed(b, 2, 'uint16', header);
  return b.readUInt16LE(0);
}

export const encodeUint32 = u32;
export function decodeUint32(b: Buffer, header?: number): number {
  fixed(b, 4, 'uint32', header);
  return b.readUInt32LE(0);
}

export function encodeInt32(v: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeInt32LE(v | 0, 0);
  return b;
}
export function decodeInt32(b: Buffer, header?: number): number {
  fixed(b, 4, 'int32', header);
  return b.readInt32LE(0);
}

export function encodeUint64(v: bigint): Buffer {
  const b = Buffer.allocUnsafe(8);
  b.writeBigUInt64LE(BigInt.asUintN(64, v), 0);
  return b;
}
export function decodeUint64(b: Buffer, header?: number): bigint {
  fixed(b, 8, 'uint64', header);
  return b.readBigUInt64LE(0);
}

/** `uint32 count`, then `{uint32 len, bytes}` per entry; an empty slice encodes to no bytes (OpenZiti omits the header). */
export function encodeStringSlice(values: readonly string[]): Buffer {
  if (values.length === 0) return Buffer.alloc(0);
  const parts: Buffer[] = [u32(values.length)];
  for (const v of values) {
    const s = Buffer.from(v, 'utf8');
    parts.push(u32(s.length), s);
  }
  return Buffer.concat(parts);
}

class Reader {
  at = 0;
  constructor(
    readonly b: Buffer,
    readonly what: string,
    readonly header?: number,
  ) {}
  uint32(field: string): number {
    if (this.b.length - this.at < 4) throw new HeaderValueError(this.header, `${this.what}: not enough bytes for ${field}`);
    const v = this.b.readUInt32LE(this.at);
    this.at += 4;
    return v;
  }
  bytes(len: number, field: string): Buffer {
    if (len > MAX_COLLECTION_ENTRY_BYTES) throw new HeaderValueError(this.header, `${this.what}: ${field} longer than ${MAX_COLLECTION_ENTRY_BYTES} bytes`);
    if (len > this.b.length - this.at) throw new HeaderValueError(this.header, `${this.what}: ${field} length ${len} overruns the value`);
    const v = this.b.subarray(this.at, this.at + len);
    this.at += len;
    return v;
  }
  string(field: string): string {
    return this.bytes(this.uint32(`${field} length`), field).toString('utf8');
  }
  count(): number {
    const n = this.uint32('count');
    if (n > MAX_COLLECTION_ENTRIES) throw new HeaderValueError(this.header, `${this.what}: ${n} entries, at most ${MAX_COLLECTION_ENTRIES}`);
    return n;
  }
}

export function decodeStringSlice(b: Buffer, header?: number): string[] {
  if (b.length === 0) return [];
  const r = new Reader(b, 'string slice', header);
  const n = r.count();
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(r.string('entry'));
  return out;
}

/** Peer data: `uint32 count`, then `{uint32 key, uint32 len, bytes}` per entry. */
export function encodeU32BytesMap(m: ReadonlyMap<number, Buffer>): Buffer {
  if (m.size === 0) return Buffer.alloc(0);
  const parts: Buffer[] = [u32(m.size)];
  for (const [k, v] of m) parts.push(u32(k), u32(v.length), v);
  return Buffer.concat(parts);
}

export function decodeU32BytesMap(b: Buffer, header?: number): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  if (b.length === 0) return out;
  const r = new Reader(b, 'uint32->bytes map', header);
  const n = r.count();
  for (let i = 0; i < n; i++) {
    const key = r.uint32('key');
    out.set(key, r.bytes(r.uint32('entry length'), 'entry'));
  }
  return out;
}

/** Tags: `uint32 count`, then `{uint32 klen, k, uint32 vlen, v}` per entry. */
export function encodeStringMap(m: ReadonlyMap<string, string> | Readonly<Record<string, string>>): Buffer {
  const entries = m instanceof Map ? [...m.entries()] : Object.entries(m);
  if (entries.length === 0) return Buffer.alloc(0);
  const parts: Buffer[] = [u32(entries.length)];
  for (const [k, v] of entries) {
    const kb = Buffer.from(k, 'utf8');
    const vb = Buffer.from(v, 'utf8');
    parts.push(u32(kb.length), kb, u32(vb.length), vb);
  }
  return Buffer.concat(parts);
}

export function decodeStringMap(b: Buffer, header?: number): Map<string, string> {
  const out = new Map<string, string>();
  if (b.length === 0) return out;
  const r = new Reader(b, 'string->string map', header);
  const n = r.count();
  for (let i = 0; i < n; i++) {
    const k = r.string('key');
    out.set(k, r.string('value'));
  }
  return out;
}

/**
 * A capability mask: the big-endian minimal bytes of a big integer with bit N set for capability N
 * (Go `big.Int.Bytes()`; zero is empty). A negative capability N is bit 64+N (HEAD `mask.go`).
 */
export function encodeCapabilities(bits: Iterable<number>): Buffer {
  let v = 0n;
  for (const bit of bits) {
    const n = bit < 0 ? 64 + bit : bit;
    if (!Number.isInteger(n) || n < 0 || n > 1023) throw new RangeError(`capability bit ${bit} out of range`);
    v |= 1n << BigInt(n);
  }
  if (v === 0n) return Buffer.alloc(0);
  let hex = v.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  return Buffer.from(hex, 'hex');
}

/** The bits set in a capability mask, ascending. */
export function decodeCapabilities(b: Buffer): number[] {
  const out: number[] = [];
  for (let i = 0; i < b.length; i++) {
    const byte = b[b.length - 1 - i]!;
    for (let j = 0; j < 8; j++) if (byte & (1 << j)) out.push(i * 8 + j);
  }
  return out;
}

/** Whether a capability mask has bit N set (a negative N is bit 64+N). */
export function hasCapability(mask: Buffer | undefined, bit: number): boolean {
  if (!mask) return false;
  const n = bit < 0 ? 64 + bit : bit;
  const byteIndex = mask.length - 1 - Math.floor(n / 8);
  return byteIndex >= 0 && (mask[byteIndex]! & (1 << n % 8)) !== 0;
}

// Typed access to a message's headers.

export const getString = (h: Headers, id: number): string | undefined => (h.has(id) ? decodeString(h.get(id)!) : undefined);
export const getBool = (h: Headers, id: number): boolean | undefined => (h.has(id) ? decodeBool(h.get(id)!) : undefined);
export const getByte = (h: Headers, id: number): number | undefined => (h.has(id) ? decodeByte(h.get(id)!, id) : undefined);
export const getUint16 = (h: Headers, id: number): number | undefined => (h.has(id) ? decodeUint16(h.get(id)!, id) : undefined);
export const getUint32 = (h: Headers, id: number): number | undefined => (h.has(id) ? decodeUint32(h.get(id)!, id) : undefined);
export const getInt32 = (h: Headers, id: number): number | undefined => (h.has(id) ? decodeInt32(h.get(id)!, id) : undefined);
export const getUint64 = (h: Headers, id: number): bigint | undefined => (h.has(id) ? decodeUint64(h.get(id)!, id) : undefined);
export const getStringSlice = (h: Headers, id: number): string[] | undefined => (h.has(id) ? decodeStringSlice(h.get(id)!, id) : undefined);
export const getU32BytesMap = (h: Headers, id: number): Map<number, Buffer> | undefined =>
  h.has(id) ? decodeU32BytesMap(h.get(id)!, id) : undefined;
export const getStringMap = (h: Headers, id: number): Map<string, string> | undefined => (h.has(id) ? decodeStringMap(h.get(id)!, id) : undefined);
