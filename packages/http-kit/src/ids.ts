import { randomBytes, randomUUID } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-';

/**
 * A shortid like the controller's `eid.New()`: 9 characters over `0-9a-zA-Z.-`.
 * Used for entity ids and request ids. Never starts with `.` or `-`.
 */
export function shortId(length = 9): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) {
    const alphabet = i === 0 ? 62 : 64;
    out += ALPHABET[bytes[i]! % alphabet];
  }
  return out;
}

/** API session tokens are UUIDv4. */
export function uuidToken(): string {
  return randomUUID();
}
