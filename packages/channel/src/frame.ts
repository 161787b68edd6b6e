// Channel V2 framing (openziti/channel message.go: marshalWithVersion, ReadV2, unmarshalHeaders).
//
//   0  magic 03 06 09 0c | 4 content type int32 LE | 8 sequence int32 LE
//   12 headers length int32 LE | 16 body length int32 LE | 20 headers | 20+H body
//   header entry: key int32 LE, length uint32 LE, value
import { FrameError } from './errors.js';

/** Header values by id. */
export type Headers = Map<number, Buffer>;

/** One channel message. `sequence` is assigned by the sending channel (the hello and its result use -1). */
export interface Message {
  contentType: number;
  sequence: number;
  headers: Headers;
  body: Buffer;
}

export const MAGIC_V2 = Buffer.from([0x03, 0x06, 0x09, 0x0c]);
export const MAGIC_UNKNOWN_VERSION = Buffer.from([0x03, 0x06, 0x09, 0x0a]);
export const FRAME_PREFIX_LENGTH = 20;

/** OpenZiti's reply to a bad magic (`WriteUnknownVersionResponse`): magic 03 06 09 0a, count 2, versions 1 and 2. */
export const UNKNOWN_VERSION_REPLY: Buffer = (() => {
  const b = Buffer.alloc(16);
  MAGIC_UNKNOWN_VERSION.copy(b, 0);
  b.writeUInt32LE(2, 4);
  b.writeUInt32LE(1, 8);
  b.writeUInt32LE(2, 12);
  return b;
})();

/** Bounds a decoder enforces before it buffers a frame. */
export interface FrameLimits {
  maxHeaderBytes: number;
  maxBodyBytes: number;
  maxHeaders: number;
}

export const DEFAULT_FRAME_LIMITS: Readonly<FrameLimits> = Object.freeze({
  maxHeaderBytes: 64 * 1024,
  maxBodyBytes: 16 * 1024 * 1024,
  maxHeaders: 256,
});

/** The limits OpenZiti puts on a hello frame (`readHelloV2`: headers ≤ 16384, body ≤ 4192). */
export const HELLO_FRAME_LIMITS: Readonly<FrameLimits> = Object.freeze({ maxHeaderBytes: 16384, maxBodyBytes: 4192, maxHeaders: 64 });

/** A new message (sequence 0 until a channel sends it). */
export function newMessage(contentType: number, body?: Buffer | Uint8Array | string, headers?: Iterable<readonly [number, Buffer]>): Message {
  const b = body === undefined ? Buffer.alloc(0) : typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.isBuffer(body) ? body : Buffer.from(body);
  return { contentType, sequence: 0, headers: new Map(headers ?? []), body: b };
}

const INT32_MAX = 0x7fffffff;

/** The V2 frame of a message. Throws a RangeError if a length does not fit the frame's int32 fields. */
export function encodeFrame(msg: Message): Buffer {
  let headerBytes = 0;
  for (const [key, value] of msg.headers) {
    if (!Number.isInteger(key) || key < -0x80000000 || key > INT32_MAX) throw new RangeError(`header id ${key} is not an int32`);
    headerBytes += 8 + value.length;
  }
  if (headerBytes > INT32_MAX || msg.body.length > INT32_MAX) throw new RangeError('frame section longer than int32');
  const out = Buffer.allocUnsafe(FRAME_PREFIX_LENGTH + headerBytes + msg.body.length);
  MAGIC_V2.copy(out, 0);
  out.writeInt32LE(msg.contentType | 0, 4);
  out.writeInt32LE(msg.sequence | 0, 8);
  out.writeInt32LE(headerBytes, 12);
  out.writeInt32LE(msg.body.length, 16);
  let at = FRAME_PREFIX_LENGTH;
  for (const [key, value] of msg.headers) {
    out.writeInt32LE(key, at);
    out.writeUInt32LE(value.length, at + 4);
    value.copy(out, at + 8);
    at += 8 + value.length;
  }
  msg.body.copy(out, at);
  return out;
}

/** Parses a frame's header section; every entry is bounds-checked against the section. */
export function decodeHeaders(data: Buffer, maxHeaders: number = DEFAULT_FRAME_LIMITS.maxHeaders): Headers {
  const out: Headers = new Map();
  let at = 0;
  let count = 0;
  while (at < data.length) {
    if (at + 8 > data.length) throw new FrameError('HEADER_OVERRUN', `truncated header entry at ${at} of ${data.length}`);
    const key = data.readInt32LE(at);
    const len = data.readUInt32LE(at + 4);
    if (len > data.length - at - 8) throw new FrameError('HEADER_OVERRUN', `header ${key} length ${len} overruns the header section`);
    if (++count > maxHeaders) throw new FrameError('TOO_MANY_HEADERS', `more than ${maxHeaders} headers`);
    out.set(key, data.subarray(at + 8, at + 8 + len));
    at += 8 + len;
  }
  return out;
}

/**
 * An incremental V2 decoder: `push` chunks of any size (partial frames, many frames per chunk),
 * then take complete messages with `next()` (or both at once with `feed`). Lengths are checked
 * against the limits as soon as a frame's 20-byte prefix is in, before its data is buffered.
 * After a FrameError the decoder is spent: every later call throws the same error.
 */
export class FrameDecoder {
  readonly limits: FrameLimits;
  private chunks: Buffer[] = [];
  private length = 0;
  private failed: FrameError | undefined;

  constructor(limits: Partial<FrameLimits> = {}) {
    this.limits = { ...DEFAULT_FRAME_LIMITS, ...limits };
  }

  /** Bytes received and not yet returned as messages. */
  get buffered(): number {
    return this.length;
  }

  push(chunk: Buffer): void {
    if (this.failed) throw this.failed;
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  /** Pushes a chunk and returns every message it completes. */
  feed(chunk: Buffer): Message[] {
    this.push(chunk);
    const out: Message[] = [];
    for (let m = this.next(); m; m = this.next()) out.push(m);
    return out;
  }

  /** The next complete message, or undefined if more bytes are needed. */
  next(): Message | undefined {
    if (this.failed) throw this.failed;
    try {
      return this.decodeOne();
    } catch (err) {
      if (err instanceof FrameError) {
        this.failed = err;
        this.chunks = [];
        this.length = 0;
      }
      throw err;
    }
  }

  /** Takes the bytes buffered past the last returned message (for handing a socket on). */
  takeRemainder(): Buffer {
    const rest = Buffer.concat(this.chunks, this.length);
    this.chunks = [];
    this.length = 0;
    return rest;
  }

  private decodeOne(): Message | undefined {
    if (this.length === 0) return undefined;
    const magicBytes = this.peek(Math.min(4, this.length));
    if (!MAGIC_V2.subarray(0, magicBytes.length).equals(magicBytes)) {
      throw new FrameError('BAD_MAGIC', `bad magic ${magicBytes.toString('hex')}`, UNKNOWN_VERSION_REPLY);
    }
    if (this.length < FRAME_PREFIX_LENGTH) return undefined;
    const prefix = this.peek(FRAME_PREFIX_LENGTH);
    const headerLen = prefix.readInt32LE(12);
    const bodyLen = prefix.readInt32LE(16);
    if (headerLen < 0 || bodyLen < 0) throw new FrameError('NEGATIVE_LENGTH', `negative length (headers ${headerLen}, body ${bodyLen})`);
    if (headerLen > this.limits.maxHeaderBytes) throw new FrameError('HEADERS_TOO_LONG', `headers of ${headerLen} bytes exceed ${this.limits.maxHeaderBytes}`);
    if (bodyLen > this.limits.maxBodyBytes) throw new FrameError('BODY_TOO_LONG', `body of ${bodyLen} bytes exceeds ${this.limits.maxBodyBytes}`);
    const total = FRAME_PREFIX_LENGTH + headerLen + bodyLen;
    if (this.length < total) return undefined;
    const frame = this.take(total);
    const headers = decodeHeaders(frame.subarray(FRAME_PREFIX_LENGTH, FRAME_PREFIX_LENGTH + headerLen), this.limits.maxHeaders);
    return {
      contentType: frame.readInt32LE(4),
      sequence: frame.readInt32LE(8),
      headers,
      body: frame.subarray(FRAME_PREFIX_LENGTH + headerLen, total),
    };
  }

  /** The first n buffered bytes (n ≤ length), without consuming them. */
  private peek(n: number): Buffer {
    if (this.chunks[0]!.length >= n) return this.chunks[0]!.subarray(0, n);
    const joined = Buffer.concat(this.chunks, this.length);
    this.chunks = [joined];
    return joined.subarray(0, n);
  }

  /** Consumes the first n buffered bytes (n ≤ length). */
  private take(n: number): Buffer {
    const first = this.chunks[0]!;
    let out: Buffer;
    if (first.length >= n) {
      out = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
    } else {
      out = Buffer.allocUnsafe(n);
      let filled = 0;
      while (filled < n) {
        const c = this.chunks[0]!;
        const k = Math.min(c.length, n - filled);
        c.copy(out, filled, 0, k);
        filled += k;
        if (k === c.length) this.chunks.shift();
        else this.chunks[0] = c.subarray(k);
      }
    }
    this.length -= n;
    return out;
  }
}
