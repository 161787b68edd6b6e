import { randomBytes, randomUUID } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-';

/** Random bytes drawn 4 KiB at a time: an id takes its bytes from here, not from its own call. */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;

function takeRandom(n: number): number {
  if (poolOffset + n > pool.length) {
    pool = randomBytes(Math.max(POOL_BYTES, n));
    poolOffset = 0;
  }
  const at = poolOffset;
  poolOffset += n;
  return at;
}

/**
 * A shortid like the controller's `eid.New()`: 9 characters over `0-9a-zA-Z.-`.
 * Used for entity ids and request ids. Never starts with `.` or `-`.
 */
export function shortId(length = 9): string {
  const at = takeRandom(length);
  let out = '';
  for (let i = 0; i < length; i++) {
    const alphabet = i === 0 ? 62 : 64;
    out += ALPHABET[pool[at + i]! % alphabet];
  }
  return out;
}

/** API session tokens are UUIDv4. */
export function uuidToken(): string {
  return randomUUID();
}
