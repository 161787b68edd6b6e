import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** A fresh random secret: 32 bytes, base64url. */
export function generateSecret(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Reads a secret kept in the data directory, creating it (mode 0600) on first use. Later starts
 * read the same value, so whatever it protects survives a restart.
 */
export function readOrCreateSecret(file: string, generate: () => string = generateSecret): string {
  if (existsSync(file)) {
    const value = readFileSync(file, 'utf8').trim();
    if (value === '') throw new Error(`${file} is empty; delete it to generate a new secret`);
    return value;
  }
  mkdirSync(dirname(file), { recursive: true });
  const value = generate();
  writeFileSync(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
  return value;
}
