import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInProcessBus, createMemoryCache } from '@ziti/messaging';
import { loadConfig } from './config.js';
import { startGateway } from './index.js';
import { SECRET, call, startFakeIdentityAuth } from './testing/harness.js';

describe('the admin console setting', () => {
  let dataDir: string;
  let identityAuth: Awaited<ReturnType<typeof startFakeIdentityAuth>>;
  const bus = createInProcessBus();

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'gw-zac-'));
    identityAuth = await startFakeIdentityAuth();
  });
  afterAll(async () => {
    await identityAuth.close();
    await bus.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const start = (consoleDir?: string) =>
    startGateway({
      bus, cache: createMemoryCache(), internalSecret: SECRET, listen: { host: '127.0.0.1', port: 0 }, dataDir, upstreams: {},
      identityAuthGrpc: identityAuth.address, consoleDir, log: () => undefined,
    });

  it('answers /zac/ and /assets/ 404 in the envelope without a console directory', async () => {
    const gw = await start();
    try {
      for (const path of ['/zac/', '/zac', '/zac/index.html', '/assets/x.js']) {
        const r = await call(gw, { path });
        expect(r.status).toBe(404);
        expect(r.json.error.code).toBe('NOT_FOUND');
      }
    } finally {
      await gw.stop();
    }
  });

  it('serves the index from the directory it is given', async () => {
    const zac = mkdtempSync(join(tmpdir(), 'gw-zac-build-'));
    writeFileSync(join(zac, 'index.html'), '<html>zac</html>');
    const gw = await start(zac);
    try {
      const r = await call(gw, { path: '/zac/identities' });
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(r.text).toBe('<html>zac</html>');
    } finally {
      await gw.stop();
      rmSync(zac, { recursive: true, force: true });
    }
  });

  it('fails the start on a directory that does not exist or is a file', async () => {
    await expect(start(join(dataDir, 'missing'))).rejects.toThrow(/ZITI_ZAC_DIR: .* is not a readable directory/);
    const file = join(dataDir, 'a-file');
    writeFileSync(file, 'x');
    await expect(start(file)).rejects.toThrow(/ZITI_ZAC_DIR/);
  });

  it('reads ZITI_ZAC_DIR as an absolute path, unset by default', () => {
    const base = { ZITI_INTERNAL_SECRET: 'console-test-internal-secret-0123456789', ZITI_SERVER_KEY_SECRET: 'console-test-server-key-secret-0123456789' };
    expect(loadConfig(base).consoleDir).toBeUndefined();
    expect(loadConfig({ ...base, ZITI_ZAC_DIR: ' ' }).consoleDir).toBeUndefined();
    expect(loadConfig({ ...base, ZITI_ZAC_DIR: 'zac' }).consoleDir).toBe(join(process.cwd(), 'zac'));
  });
});
