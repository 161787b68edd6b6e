import { FrameError } from './errors.js';
import { DEFAULT_FRAME_LIMITS, FrameDecoder, UNKNOWN_VERSION_REPLY, decodeHeaders, encodeFrame, newMessage } from './frame.js';

const sample = () => {
  const m = newMessage(20001, Buffer.from('body-bytes'), [
    [1, Buffer.from([1, 0, 0, 0])],
    [1024, Buffer.from([1])],
    [-7, Buffer.alloc(0)],
  ]);
  m.sequence = -1;
  return m;
};

function prefix(o: { magic?: number[]; ct?: number; seq?: number; h?: number; b?: number }): Buffer {
  const p = Buffer.alloc(20);
  Buffer.from(o.magic ?? [3, 6, 9, 0x0c]).copy(p, 0);
  p.writeInt32LE(o.ct ?? 5, 4);
  p.writeInt32LE(o.seq ?? 1, 8);
  p.writeInt32LE(o.h ?? 0, 12);
  p.writeInt32LE(o.b ?? 0, 16);
  return p;
}

function refusal(bytes: Buffer, limits = {}): FrameError {
  const d = new FrameDecoder(limits);
  try {
    d.feed(bytes);
  } catch (err) {
    expect(err).toBeInstanceOf(FrameError);
    return err as FrameError;
  }
  throw new Error('no FrameError');
}

describe('frame codec', () => {
  it('encodes the V2 layout and decodes it back', () => {
    const frame = encodeFrame(sample());
    expect(frame.subarray(0, 4)).toEqual(Buffer.from([3, 6, 9, 0x0c]));
    expect(frame.readInt32LE(4)).toBe(20001);
    expect(frame.readInt32LE(8)).toBe(-1);
    expect(frame.readInt32LE(12)).toBe(8 + 4 + 8 + 1 + 8);
    expect(frame.readInt32LE(16)).toBe(10);
    const [m, ...rest] = new FrameDecoder().feed(frame);
    expect(rest).toHaveLength(0);
    expect(m).toEqual(sample());
  });

  it('decodes frames split at every byte and many frames in one chunk', () => {
    const a = sample();
    const b = newMessage(5, undefined, [[5, Buffer.alloc(8, 7)]]);
    b.sequence = 42;
    const bytes = Buffer.concat([encodeFrame(a), encodeFrame(b), encodeFrame(a)]);
    const d = new FrameDecoder();
    const out = [];
    for (let i = 0; i < bytes.length; i++) out.push(...d.feed(bytes.subarray(i, i + 1)));
    expect(out).toEqual([a, b, a]);
    expect(d.buffered).toBe(0);
    expect(new FrameDecoder().feed(bytes)).toEqual([a, b, a]);
    const parts = new FrameDecoder();
    expect(parts.feed(bytes.subarray(0, 30))).toEqual([]);
    expect(parts.feed(bytes.subarray(30, bytes.length - 3))).toEqual([a, b]);
    expect(parts.feed(bytes.subarray(bytes.length - 3))).toEqual([a]);
  });

  it('keeps bytes past the last complete frame for takeRemainder', () => {
    const d = new FrameDecoder();
    const f = encodeFrame(sample());
    d.push(Buffer.concat([f, f.subarray(0, 7)]));
    expect(d.next()).toEqual(sample());
    expect(d.next()).toBeUndefined();
    expect(d.takeRemainder()).toEqual(f.subarray(0, 7));
  });

  it('refuses a bad magic as soon as it differs, with the unknown-version reply', () => {
    expect(UNKNOWN_VERSION_REPLY).toEqual(Buffer.from('030609 0a 02000000 01000000 02000000'.replace(/ /g, ''), 'hex'));
    const e = refusal(Buffer.from('GET / HTTP/1.1\r\n'));
    expect(e.code).toBe('BAD_MAGIC');
    expect(e.reply).toEqual(UNKNOWN_VERSION_REPLY);
    expect(new FrameDecoder().feed(Buffer.from([3, 6]))).toEqual([]);
    expect(refusal(Buffer.from([3, 7])).code).toBe('BAD_MAGIC');
    expect(refusal(prefix({ magic: [3, 6, 9, 0x0d] })).code).toBe('BAD_MAGIC');
  });

  it('refuses negative and absurd lengths before buffering the frame', () => {
    expect(refusal(prefix({ h: -1 })).code).toBe('NEGATIVE_LENGTH');
    expect(refusal(prefix({ b: -2147483648 })).code).toBe('NEGATIVE_LENGTH');
    expect(refusal(prefix({ h: DEFAULT_FRAME_LIMITS.maxHeaderBytes + 1 })).code).toBe('HEADERS_TOO_LONG');
    expect(refusal(prefix({ b: 0x7fffffff })).code).toBe('BODY_TOO_LONG');
    expect(refusal(prefix({ b: 11 }), { maxBodyBytes: 10 }).code).toBe('BODY_TOO_LONG');
  });

  it('refuses header entries that overrun, truncated entries, and too many headers', () => {
    const overrun = Buffer.alloc(12);
    overrun.writeInt32LE(4, 0);
    overrun.writeUInt32LE(5, 4);
    expect(refusal(Buffer.concat([prefix({ h: 12 }), overrun])).code).toBe('HEADER_OVERRUN');
    const huge = Buffer.alloc(8);
    huge.writeUInt32LE(0xffffffff, 4);
    expect(refusal(Buffer.concat([prefix({ h: 8 }), huge])).code).toBe('HEADER_OVERRUN');
    expect(refusal(Buffer.concat([prefix({ h: 5 }), Buffer.alloc(5)])).code).toBe('HEADER_OVERRUN');
    const many = newMessage(1, undefined, Array.from({ length: 5 }, (_, i) => [i, Buffer.alloc(0)] as const));
    expect(refusal(encodeFrame(many), { maxHeaders: 4 }).code).toBe('TOO_MANY_HEADERS');
    expect(() => decodeHeaders(Buffer.alloc(3))).toThrow(FrameError);
  });

  it('stays refused after an error', () => {
    const d = new FrameDecoder();
    expect(() => d.feed(prefix({ h: -5 }))).toThrow(FrameError);
    expect(() => d.feed(encodeFrame(sample()))).toThrow(/negative length/);
  });
});

