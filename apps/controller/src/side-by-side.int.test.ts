import { freePort } from './embedded-postgres.js';
import { api, cleanUp, exitOf, login, makeDataDir, startControllerProcess } from './testing/controller-process.js';

// Two embedded controllers (the built `node dist/main.js`) on one host, each with its own data
// directory and HTTPS port: their contexts listen on free loopback ports unless configured.
jest.setTimeout(180_000);

describe('two embedded controllers side by side', () => {
  afterAll(cleanUp);

  it('both start from their own data directories and answer /version and a login; configured context ports are used', async () => {
    const [pkiEnrollmentHttp, policyGrpc] = [await freePort(), await freePort()];
    const [a, b] = await Promise.all([
      startControllerProcess(makeDataDir()),
      startControllerProcess(makeDataDir(), { PKI_ENROLLMENT_HTTP_PORT: String(pkiEnrollmentHttp), POLICY_GRPC_PORT: String(policyGrpc) }),
    ]);
    expect(a.port).not.toBe(b.port);
    for (const ctl of [a, b]) {
      const version = await api(ctl.port, 'GET', '/edge/client/v1/version');
      expect(version.status).toBe(200);
      expect(version.body.data).toEqual(expect.objectContaining({ version: expect.any(String) }));
      expect(await login(ctl.port)).toEqual(expect.any(String));
    }
    expect(b.output()).toContain(`"context":"pki-enrollment","msg":"http https://127.0.0.1:${pkiEnrollmentHttp},`);
    expect(b.output()).toMatch(new RegExp(`"context":"policy","msg":"http https://127\\.0\\.0\\.1:\\d+, grpc 127\\.0\\.0\\.1:${policyGrpc}"`));

    for (const ctl of [a, b]) ctl.child.kill('SIGTERM');
    for (const ctl of [a, b]) expect((await exitOf(ctl, 60_000)).code).toBe(0);
  });
});
