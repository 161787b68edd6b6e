import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * TOTP as the controller does it (§6.8, dgryski/dgoogauth): HMAC-SHA1, 6 digits, 30-second steps,
 * UTC, a window of 5 steps (t-2 … t+2); 10-byte secrets in base32 (16 characters, no padding);
 * 20 recovery codes of 6 base32 characters. Implemented on node:crypto (RFC 6238 / RFC 4226).
 */

export const TOTP_DIGITS = 6;
export const TOTP_STEP_SECONDS = 30;
/** Steps accepted either side of the current one (window size 5). */
export const TOTP_SKEW_STEPS = 2;
export const SECRET_BYTES = 10;
export const RECOVERY_CODE_COUNT = 20;
export const DEFAULT_TOTP_ISSUER = 'openziti.io';

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32, standard alphabet, without padding. */
export function base32Encode(buf: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of buf) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += B32[(value << (5 - bits)) & 31];
  return out;
}

/** Decodes base32 (case-insensitive, padding and spaces ignored); null when invalid. */
export function base32Decode(s: string): Buffer | null {
  const clean = s.toUpperCase().replace(/[=\s]/g, '');
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const c of clean) {
    const i = B32.indexOf(c);
    if (i < 0) return null;
    value = (value << 5) | i;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

export function newTotpSecret(): string {
  return base32Encode(randomBytes(SECRET_BYTES));
}

/** The HOTP value (RFC 4226) of a counter, zero-padded to 6 digits. */
export function hotp(secret: Buffer, counter: number): string {
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', secret).update(msg).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const bin = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** TOTP_DIGITS;
  return String(bin).padStart(TOTP_DIGITS, '0');
}

/** The TOTP code of a base32 secret at a time. */
export function totpCode(secret: string, at = Date.now()): string {
  const key = base32Decode(secret) ?? Buffer.alloc(0);
  return hotp(key, Math.floor(at / 1000 / TOTP_STEP_SECONDS));
}

/**
 * The time steps (30 s counters) within t-2 … t+2 whose TOTP of the secret is `code` (exactly 6
 * digits); empty when none. Usually one step; two only when two steps of the window share a code.
 * Every step of the window is compared in constant time, whatever matched.
 */
export function totpSteps(secret: string, code: string, at = Date.now()): number[] {
  if (!/^[0-9]{6}$/.test(code)) return [];
  const key = base32Decode(secret);
  if (!key || key.length === 0) return [];
  const step = Math.floor(at / 1000 / TOTP_STEP_SECONDS);
  const given = Buffer.from(code);
  const matched: number[] = [];
  for (let d = -TOTP_SKEW_STEPS; d <= TOTP_SKEW_STEPS; d++) {
    if (timingSafeEqual(Buffer.from(hotp(key, step + d)), given)) matched.push(step + d);
  }
  return matched;
}

/** Whether `code` (exactly 6 digits) is the TOTP of the secret within t-2 … t+2 steps (no replay check: see MfaGuard). */
export function verifyTotp(secret: string, code: string, at = Date.now()): boolean {
  return totpSteps(secret, code, at).length > 0;
}

/** 20 codes: 8 random bytes each, base32, the first 6 characters. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => base32Encode(randomBytes(8)).slice(0, 6));
}

/** `otpauth://totp/<issuer>:<name>?issuer=<issuer>&secret=<SECRET>` (query keys sorted, as dgoogauth). */
export function provisioningUrl(secret: string, identityName: string, issuer = DEFAULT_TOTP_ISSUER): string {
  const q = new URLSearchParams({ issuer, secret });
  return `otpauth://totp/${encodeURIComponent(issuer)}:${encodeURIComponent(identityName)}?${q.toString()}`;
}
