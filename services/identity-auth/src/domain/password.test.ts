import { ARGON2_PARAMS, DUMMY_CREDENTIAL, SALT_BYTES, generatePassword, hashPassword, verifyPassword } from './password.js';

// Expected keys computed independently with @noble/hashes' Argon2id (a separate implementation):
// argon2id(password, salt, { t: 1, m: 3072, p: 4, dkLen: 32 }), base64 std.
const VECTORS = [
  { password: 'admin', salt: Buffer.from('0123456789').toString('base64'), key: '1tgoUKdpL5ALZsMR2knAttvGIDz4Z1R1xaKcKqo5L0E=' },
  { password: 'correct horse battery staple', salt: 'AAECAwQFBgcICQ==', key: 'Pc7vInEsjNpH6tT+5B1/zGbFDP3WvFeLU5fh3Oiz6n0=' },
];

describe('UPDB password hashing (OpenZiti parameters)', () => {
  it('uses Argon2id, t=1, m=3 MiB, p=4, a 32-byte key', () => {
    expect(ARGON2_PARAMS).toEqual({ type: 2, timeCost: 1, memoryCost: 3072, parallelism: 4, hashLength: 32 });
  });

  it.each(VECTORS)('hashes $password with a known salt to the independently computed key', async ({ password, salt, key }) => {
    expect(await hashPassword(password, salt)).toEqual({ password: key, salt });
  });

  it('draws a fresh 10-byte salt, stored as padded standard base64', async () => {
    const a = await hashPassword('secret');
    const b = await hashPassword('secret');
    expect(Buffer.from(a.salt, 'base64')).toHaveLength(SALT_BYTES);
    expect(a.salt).toMatch(/^[A-Za-z0-9+/]{14}==$/);
    expect(a.password).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(a.salt).not.toBe(b.salt);
  });

  it('verifies the right password and only it', async () => {
    const stored = await hashPassword('s3cret!');
    await expect(verifyPassword('s3cret!', stored)).resolves.toBe(true);
    await expect(verifyPassword('s3cret', stored)).resolves.toBe(false);
    await expect(verifyPassword('', stored)).resolves.toBe(false);
  });

  it('never matches the dummy credential used for unknown users', async () => {
    await expect(verifyPassword('admin', DUMMY_CREDENTIAL)).resolves.toBe(false);
    expect(Buffer.from(DUMMY_CREDENTIAL.salt, 'base64')).toHaveLength(SALT_BYTES);
  });

  it('generates strong passwords', () => {
    const seen = new Set(Array.from({ length: 50 }, () => generatePassword()));
    expect(seen.size).toBe(50);
    for (const p of seen) expect(p).toMatch(/^[A-Za-z0-9]{24}$/);
  });
});
