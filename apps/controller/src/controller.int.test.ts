import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, get as httpGet } from 'node:http';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, testInfra, type TestDatabase } from '@ziti/test-kit';
import { startController } from './controller.js';
import { readOrCreateSecret } from './files.js';

function get(url: string, ca: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    request(url, { ca }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    })
      .on('error', reject)
      .end();
  });
}

describe('all-in-one controller', () => {
  let db: TestDatabase;
  let dataDir: string;
  beforeAll(async () => {
    db = await createTestDatabase((await testInfra()).databaseUrl);
    dataDir = mkdtempSync(join(tmpdir(), 'ziti-ctrl-'));
  });
  afterAll(async () => {
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts every context behind the gateway on the real servers and serves /version over HTTPS', async () => {
    const { natsUrl, redisUrl } = await testInfra();
    const ctrl = await startController({
      dataDir,
      databaseUrl: db.url,
      natsUrl,
      redisUrl,
      listenHost: '127.0.0.1',
      port: 0, routerCtrlPort: 0,
      adminPassword: 'admin-test-password',
      internalSecret: 'controller-test-secret',
    });
    try {
      expect(Object.keys(ctrl.services).sort()).toEqual(['fabric', 'identity-auth', 'pki-enrollment', 'policy', 'posture', 'session']);
      const res = await get(`https://127.0.0.1:${ctrl.port}/edge/client/v1/version`, ctrl.caCertPem);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(expect.objectContaining({ version: expect.any(String) }));
    } finally {
      await ctrl.stop();
    }
  });

  it('serves metrics on a free port when its preferred one is taken, and fails the start when the port was asked for', async () => {
    const { natsUrl, redisUrl } = await testInfra();
    const squatter = createServer();
    await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', r));
    const taken = (squatter.address() as { port: number }).port;
    const base = { dataDir, databaseUrl: db.url, natsUrl, redisUrl, listenHost: '127.0.0.1', port: 0, routerCtrlPort: 0, adminPassword: 'admin-test-password', internalSecret: 'controller-test-secret' };
    try {
      const ctrl = await startController({ ...base, metricsPort: taken, metricsPortPreferred: true });
      try {
        expect(ctrl.metricsPort).toBeGreaterThan(0);
        expect(ctrl.metricsPort).not.toBe(taken);
        const status = await new Promise<number>((resolve, reject) =>
          httpGet(`http://127.0.0.1:${ctrl.metricsPort}/metrics`, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          }).on('error', reject),
        );
        expect(status).toBe(200);
      } finally {
        await ctrl.stop();
      }
      await expect(startController({ ...base, metricsPort: taken })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      squatter.close();
    }
  });

  it('generates a secret file once (mode 0600) and reads the same value afterwards', () => {
    const file = join(dataDir, 'generated-secret');
    const first = readOrCreateSecret(file);
    expect(readOrCreateSecret(file)).toBe(first);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});
