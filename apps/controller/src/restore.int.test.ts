import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, testInfra, type TestDatabase } from '@ziti/test-kit';
import { startController } from './controller.js';
import { ADMIN_PASSWORD, api, cleanUp, exitOf, identityNames, login, makeDataDir, startControllerProcess } from './testing/controller-process.js';

// The restore command (`npm run restore`, the built `node dist/restore.js`) in the embedded mode:
// a snapshot taken through the API of one controller restored into the embedded PostgreSQL of a
// fresh data directory, which an embedded controller then serves.
jest.setTimeout(240_000);

const RESTORE = join(__dirname, '..', 'dist', 'restore.js');
const SECRET = 'restore-test-internal-secret';

function restore(dataDir: string, args: string[]): { status: number | null; out: string } {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(DATABASE_URL|NATS_URL|REDIS_URL|ZITI_.*|INIT_CWD)$/.test(k)));
  const r = spawnSync(process.execPath, [RESTORE, ...args], { env: { ...base, ZITI_DATA_DIR: dataDir }, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('npm run restore (embedded)', () => {
  let db: TestDatabase;
  let source: string;
  afterAll(async () => {
    await cleanUp();
    await db?.drop();
    if (source) rmSync(source, { recursive: true, force: true });
  });

  it('restores into a fresh data directory, refuses while its controller runs and over data unless --replace', async () => {
    expect(existsSync(RESTORE)).toBe(true);
    db = await createTestDatabase((await testInfra()).databaseUrl);
    source = mkdtempSync(join(tmpdir(), 'ziti-restore-src-'));
    const name = `restored-${process.pid}-${Date.now()}`;
    const ctrl = await startController({ dataDir: source, databaseUrl: db.url, listenHost: '127.0.0.1', port: 0, routerCtrlPort: 0, adminPassword: ADMIN_PASSWORD, internalSecret: SECRET });
    try {
      const token = await login(ctrl.port);
      expect((await api(ctrl.port, 'POST', '/edge/management/v1/identities', { token, body: { name, type: 'User', isAdmin: false } })).status).toBe(201);
      expect((await api(ctrl.port, 'POST', '/edge/management/v1/database/snapshot', { token })).status).toBe(200);
    } finally {
      await ctrl.stop();
    }
    const [file] = readdirSync(join(source, 'snapshots')).map((f) => join(source, 'snapshots', f));

    const target = makeDataDir();
    const first = restore(target, [file!]);
    expect(first).toEqual({ status: 0, out: expect.stringMatching(/\[restore\] done: \d+ rows in 6 contexts restored/) });

    const restored = await startControllerProcess(target, { ZITI_INTERNAL_SECRET: SECRET });
    try {
      expect(await identityNames(restored.port, await login(restored.port), name)).toEqual([name]);
      const busy = restore(target, [file!]);
      expect(busy.status).toBe(1);
      expect(busy.out).toMatch(/refused: .*controller/);
    } finally {
      restored.child.kill('SIGTERM');
      expect((await exitOf(restored, 60_000)).code).toBe(0);
    }

    const again = restore(target, [file!]);
    expect(again.status).toBe(1);
    expect(again.out).toMatch(/refused: schema identity_auth already holds data .*--replace/);
    expect(restore(target, ['--replace', file!]).status).toBe(0);
    expect(restore(target, []).status).toBe(2);
  });
});
