import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * Session ids are cuids (reference §1.1: "sessions use a cuid"), generated here without a
 * dependency, in the layout of cuid v1: `c` + 24 lower-case base36 characters =
 * 8 of milliseconds since the epoch (so ids sort by creation time), 4 of a per-process counter,
 * 4 of a host/process fingerprint and 8 random ones (node:crypto), e.g. `clx8k2m0a000b1f9xq3z7k2mp`.
 */
const BASE = 36;
const pad = (s: string, n: number) => (s.length >= n ? s.slice(s.length - n) : '0'.repeat(n - s.length) + s);

const fingerprint = pad(BigInt(`0x${createHash('sha256').update(`${hostname()}:${process.pid}`).digest('hex').slice(0, 12)}`).toString(BASE), 4);
let counter = Math.floor(Math.random() * BASE ** 4);

function randomBlock(chars: number): string {
  const bytes = randomBytes(chars);
  let out = '';
  for (let i = 0; i < chars; i++) out += (bytes[i]! % BASE).toString(BASE);
  return out;
}

export function cuid(now: number = Date.now()): string {
  counter = (counter + 1) % BASE ** 4;
  return `c${pad(now.toString(BASE), 8)}${pad(counter.toString(BASE), 4)}${fingerprint}${randomBlock(8)}`;
}

/** `c` + 24 characters of `0-9a-z`. */
export const CUID_PATTERN = /^c[0-9a-z]{24}$/;
