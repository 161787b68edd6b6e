import { HeaderValueError } from './errors.js';
import {
  decodeBool,
  decodeByte,
  decodeCapabilities,
  decodeInt32,
  decodeStringMap,
  decodeStringSlice,
  decodeU32BytesMap,
  decodeUint16,
  decodeUint32,
  decodeUint64,
  encodeBool,
  encodeCapabilities,
  encodeInt32,
  encodeStringMap,
  encodeStringSlice,
  encodeU32BytesMap,
  encodeUint16,
  encodeUint32,
  encodeUint64,
  getStringSlice,
  getUint32,
  hasCapability,
} from './headers.js';
import { SINGLE_SOCKET_CONTROLLER_CAPABILITIES } from './constants.js';

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};

describe('header values', () => {
  it('round-trip scalars little-endian', () => {
    expect(decodeBool(encodeBool(true))).toBe(true);
    expect(decodeBool(Buffer.from([2]))).toBe(false);
    expect(decodeBool(Buffer.alloc(0))).toBe(false);
    expect(decodeUint16(encodeUint16(0xbeef))).toBe(0xbeef);
    expect(encodeUint32(0x01020304)).toEqual(Buffer.from([4, 3, 2, 1]));
    expect(decodeUint32(encodeUint32(0xffffffff))).toBe(0xffffffff);
    expect(encodeInt32(-1)).toEqual(Buffer.from([0xff, 0xff, 0xff, 0xff]));
    expect(decodeInt32(encodeInt32(-123456))).toBe(-123456);
    expect(decodeUint64(encodeUint64(0xfedcba9876543210n))).toBe(0xfedcba9876543210n);
    expect(decodeByte(Buffer.from([9]))).toBe(9);
  });

  it('refuse scalars of the wrong length', () => {
    expect(() => decodeUint32(Buffer.alloc(3), 1)).toThrow(HeaderValueError);
    expect(() => decodeUint64(Buffer.alloc(9))).toThrow(HeaderValueError);
    expect(() => decodeUint16(Buffer.alloc(1))).toThrow(HeaderValueError);
    expect(() => decodeInt32(Buffer.alloc(0))).toThrow(HeaderValueError);
    expect(() => decodeByte(Buffer.alloc(0))).toThrow(HeaderValueError);
    expect(() => getUint32(new Map([[7, Buffer.alloc(2)]]), 7)).toThrow(/header 7/);
    expect(getUint32(new Map(), 7)).toBeUndefined();
  });

  it('round-trip string slices, peer data and tags', () => {
    expect(decodeStringSlice(encodeStringSlice(['a', '', 'ünï']))).toEqual(['a', '', 'ünï']);
    expect(encodeStringSlice([])).toHaveLength(0);
    expect(decodeStringSlice(Buffer.alloc(0))).toEqual([]);
    expect(encodeStringSlice(['ab'])).toEqual(Buffer.concat([u32(1), u32(2), Buffer.from('ab')]));
    const peer = new Map([
      [1003, Buffer.from('key')],
      [1115, Buffer.alloc(0)],
    ]);
    expect(decodeU32BytesMap(encodeU32BytesMap(peer))).toEqual(peer);
    expect(decodeStringMap(encodeStringMap({ serviceId: 's1', hostId: '' }))).toEqual(new Map([['serviceId', 's1'], ['hostId', '']]));
    expect(getStringSlice(new Map([[12, encodeStringSlice(['f1', 'f2'])]]), 12)).toEqual(['f1', 'f2']);
  });

  it('refuse collections with too many entries, long entries, or lengths that overrun', () => {
    expect(() => decodeStringSlice(Buffer.from([1, 0]))).toThrow(HeaderValueError);
    expect(() => decodeStringSlice(u32(129))).toThrow(/at most 128/);
    expect(() => decodeStringSlice(Buffer.concat([u32(1), u32(8193), Buffer.alloc(8193)]))).toThrow(/8192/);
    expect(() => decodeStringSlice(Buffer.concat([u32(1), u32(10), Buffer.from('abc')]))).toThrow(/overruns/);
    expect(() => decodeStringSlice(Buffer.concat([u32(2), u32(1), Buffer.from('a')]))).toThrow(/not enough bytes/);
    expect(() => decodeStringSlice(Buffer.concat([u32(1), u32(0xffffffff)]))).toThrow(HeaderValueError);
    expect(() => decodeU32BytesMap(u32(200))).toThrow(/at most 128/);
    expect(() => decodeU32BytesMap(Buffer.concat([u32(1), u32(5)]))).toThrow(/entry length/);
    expect(() => decodeU32BytesMap(Buffer.concat([u32(1), u32(5), u32(4), Buffer.alloc(3)]))).toThrow(/overruns/);
    expect(() => decodeStringMap(Buffer.concat([u32(1), u32(1), Buffer.from('k')]))).toThrow(/value length/);
    expect(() => decodeStringMap(Buffer.from([1, 0, 0]))).toThrow(HeaderValueError);
  });

  it('encode capability masks big-endian with bit N for capability N', () => {
    expect(encodeCapabilities(SINGLE_SOCKET_CONTROLLER_CAPABILITIES)).toEqual(Buffer.from([0x5e]));
    expect(encodeCapabilities([1, 2, 3, 4, 5, 6])).toEqual(Buffer.from([0x7e]));
    expect(encodeCapabilities([1])).toEqual(Buffer.from([0x02]));
    expect(encodeCapabilities([])).toHaveLength(0);
    const withRdm = encodeCapabilities([1, -2]);
    expect(withRdm).toEqual(Buffer.from('4000000000000002', 'hex'));
    expect(decodeCapabilities(withRdm)).toEqual([1, 62]);
    expect(hasCapability(withRdm, -2)).toBe(true);
    expect(hasCapability(Buffer.from([0x02]), 1)).toBe(true);
    expect(hasCapability(Buffer.from([0x02]), 6)).toBe(false);
    expect(hasCapability(Buffer.from([0x02]), 62)).toBe(false);
    expect(hasCapability(undefined, 1)).toBe(false);
    expect(decodeCapabilities(Buffer.from([0x01, 0x00]))).toEqual([8]);
  });
});
