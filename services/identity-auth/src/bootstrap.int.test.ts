import { stat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ADMIN, Harness, M } from './testing/harness.js';

describe('bootstrap of built-ins and the default admin', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await Harness.start({ admin: { username: 'admin' } }); // no password: one is generated
  });
  afterAll(async () => {
    await h?.close();
  });

  it('creates the default admin with a generated password, stored with mode 0600 and never logged', async () => {
    const file = join(h.dataDir, 'admin-password');
    const password = (await readFile(file, 'utf8')).trim();
    expect(password).toMatch(/^[A-Za-z0-9]{24}$/);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(h.logs.filter((l) => l.includes('generated password') && l.includes(file))).toHaveLength(1);
    expect(h.logs.filter((l) => l.includes(password))).toHaveLength(0);

    const rows = await h.sql('SELECT name, type_id, is_admin, is_default_admin, auth_policy_id FROM identities');
    expect(rows).toEqual([{ name: 'Default Admin', type_id: 'Default', is_admin: true, is_default_admin: true, auth_policy_id: 'default' }]);

    const { principal } = await h.login('admin', password);
    expect(principal).toMatchObject({ identityName: 'Default Admin', isAdmin: true, isDefaultAdmin: true, isFullyAuthenticated: true });
  });

  it('stores the password as OpenZiti does: base64 of a 32-byte key and a 10-byte salt', async () => {
    const [a] = await h.sql('SELECT method, username, password, salt FROM authenticators');
    expect(a.method).toBe('updb');
    expect(a.username).toBe('admin');
    expect(Buffer.from(a.password, 'base64')).toHaveLength(32);
    expect(Buffer.from(a.salt, 'base64')).toHaveLength(10);
    expect(a.salt).toMatch(/==$/); // std base64, padded
  });

  it('is idempotent: a restart (even with another ZITI_PWD) keeps the existing admin and its password', async () => {
    const password = (await readFile(join(h.dataDir, 'admin-password'), 'utf8')).trim();
    const before = h.logs.length;
    await h.restart({ admin: { username: 'admin', password: 'another-password' } });
    expect(await h.sql('SELECT id FROM identities')).toHaveLength(1);
    expect(h.logs.slice(before).some((l) => l.includes('password'))).toBe(false);
    await expect(h.login('admin', 'another-password')).rejects.toThrow(/401/);
    await h.login('admin', password);
  });

  it('creates one default admin when several replicas start at once on a fresh database', async () => {
    const fresh = await Harness.start({}, { start: false });
    try {
      const { startService } = await import('./service.js');
      const replicas = await Promise.all([1, 2, 3, 4].map(() => startService(fresh.deps({ admin: { username: 'admin' } }))));
      await Promise.all(replicas.map((s) => s.stop()));
      expect(await fresh.sql('SELECT id FROM identities WHERE is_default_admin')).toHaveLength(1);
      expect(await fresh.sql('SELECT id FROM authenticators')).toHaveLength(1);
      expect(fresh.logs.filter((l) => l.includes('generated password'))).toHaveLength(1);
    } finally {
      await fresh.close();
    }
  });

  it('creates the built-in identity types and the default auth policy in the migration', async () => {
    expect(await h.sql('SELECT id, name FROM identity_types ORDER BY id')).toEqual([
      { id: 'Default', name: 'Default' },
      { id: 'Router', name: 'Router' },
    ]);
    const [p] = await h.sql('SELECT * FROM auth_policies');
    expect(p).toMatchObject({
      id: 'default',
      name: 'Default',
      is_system: true,
      primary_cert_allowed: true,
      primary_cert_allow_expired_certs: true,
      primary_updb_allowed: true,
      primary_updb_min_password_length: 5,
      primary_updb_max_attempts: 0,
      primary_ext_jwt_allowed: true,
      secondary_require_totp: false,
      secondary_required_ext_jwt_signer: null,
    });
  });

  it('refuses an admin username or password outside the controller limits', async () => {
    const { startService } = await import('./service.js');
    await expect(startService(h.deps({ admin: { username: 'abc' } }))).rejects.toThrow(/username/);
    await expect(startService(h.deps({ admin: { username: 'admin', password: '1234' } }))).rejects.toThrow(/password/);
  });

  it('uses the given password and name when set', async () => {
    const other = await Harness.start({ admin: { username: 'root', password: ADMIN.password, name: 'Chief Admin' } });
    try {
      const { principal } = await other.login('root', ADMIN.password);
      expect(principal.identityName).toBe('Chief Admin');
      await expect(stat(join(other.dataDir, 'admin-password'))).rejects.toThrow();
    } finally {
      await other.close();
    }
  });

  it('serves its list of identity types to any authenticated caller', async () => {
    const password = (await readFile(join(h.dataDir, 'admin-password'), 'utf8')).trim();
    const { principal } = await h.login('admin', password);
    const res = await h.call('GET', `${M}/identity-types`, { principal: { ...principal, isAdmin: false, isDefaultAdmin: false } });
    expect(res.status).toBe(200);
    expect(res.body.data.map((t: any) => t.id)).toEqual(['Default', 'Router']);
    expect(res.body.data[0]).toMatchObject({ id: 'Default', name: 'Default', tags: {}, _links: { self: { href: './identity-types/Default' } } });
    expect(res.body.meta.pagination).toEqual({ limit: 10, offset: 0, totalCount: 2 });
    expect(res.body.meta.filterableFields).toEqual(expect.arrayContaining(['id', 'name', 'createdAt', 'tags', 'isSystem']));

    const one = await h.call('GET', `${M}/identity-types/Router`, { principal });
    expect(one.body.data).toMatchObject({ id: 'Router', name: 'Router' });
    expect((await h.call('GET', `${M}/identity-types/User`, { principal })).status).toBe(404);
    expect((await h.call('GET', `${M}/identity-types`)).status).toBe(401);
  });
});
