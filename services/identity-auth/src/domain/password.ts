import { randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { ApiError } from '@ziti/errors';
import * as argon2 from 'argon2';

/**
 * UPDB password hashing exactly as the OpenZiti controller does it (§6.1, `controller/model/hash.go`):
 * Argon2id, time 1, memory 3 MiB, 4 lanes, 32-byte raw key, over a 10-byte random salt; hash and
 * salt are stored as standard base64 with padding.
 */
export const ARGON2_PARAMS = { type: argon2.argon2id, timeCost: 1, memoryCost: 3 * 1024, parallelism: 4, hashLength: 32 } as const;
export const SALT_BYTES = 10;

export const USERNAME_MIN = 4;
export const USERNAME_MAX = 100;
export const PASSWORD_MIN = 5;
export const PASSWORD_MAX = 100;

export interface HashedPassword {
  /** base64 (std, padded) of the 32-byte key */
  password: string;
  /** base64 (std, padded) of the 10-byte salt */
  salt: string;
}

async function derive(password: string, salt: Buffer): Promise<Buffer> {
  return argon2.hash(password, { ...ARGON2_PARAMS, salt, raw: true });
}

/** Hashes with the given salt (base64) or a fresh random one. */
export async function hashPassword(password: string, saltB64?: string): Promise<HashedPassword> {
  const salt = saltB64 !== undefined ? Buffer.from(saltB64, 'base64') : randomBytes(SALT_BYTES);
  const key = await derive(password, salt);
  return { password: key.toString('base64'), salt: salt.toString('base64') };
}

/** Re-hashes with the stored salt and compares the base64 strings in constant time. */
export async function verifyPassword(password: string, stored: HashedPassword): Promise<boolean> {
  const { password: candidate } = await hashPassword(password, stored.salt);
  const a = Buffer.from(candidate);
  const b = Buffer.from(stored.password);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * A stored credential that no password matches, for unknown usernames: verifying against it costs
 * the same Argon2 work as a real check, so the response time does not reveal whether a user exists.
 */
export const DUMMY_CREDENTIAL: HashedPassword = {
  salt: 'ZHVtbXlzYWx0MA==',
  password: Buffer.alloc(32).toString('base64'),
};

const PASSWORD_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

/** A strong random password (uniform over a 56-character alphabet; 24 chars ≈ 139 bits). */
export function generatePassword(length = 24): string {
  let out = '';
  for (let i = 0; i < length; i++) out += PASSWORD_ALPHABET[randomInt(PASSWORD_ALPHABET.length)];
  return out;
}

/** The password rules of an auth policy's updb section (§6.1). */
export interface PasswordRules {
  primaryUpdbMinPasswordLength: number;
  primaryUpdbRequireSpecialChar: boolean;
  primaryUpdbRequireNumberChar: boolean;
  primaryUpdbRequireMixedCase: boolean;
}

/**
 * Checks a new password against the identity's auth policy; a violation is a field error on
 * `password` (400 COULD_NOT_VALIDATE). The value is never echoed.
 */
export function checkPasswordRules(password: string, rules: PasswordRules): void {
  const fail = (reason: string) => {
    throw ApiError.field('password', reason);
  };
  if (password.length > PASSWORD_MAX) fail(`password must be at most ${PASSWORD_MAX} characters`);
  const min = Math.max(PASSWORD_MIN, rules.primaryUpdbMinPasswordLength);
  if ([...password].length < min) fail(`password must be at least ${min} characters`);
  if (rules.primaryUpdbRequireNumberChar && !/[0-9]/.test(password)) fail('password must contain at least one number character');
  if (rules.primaryUpdbRequireMixedCase && !(/\p{Lu}/u.test(password) && /\p{Ll}/u.test(password))) {
    fail('password must contain upper and lower case characters');
  }
  if (rules.primaryUpdbRequireSpecialChar && !/[^\p{L}\p{N}]/u.test(password)) fail('password must contain at least one special character');
}
