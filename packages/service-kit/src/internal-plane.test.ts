import { type ServiceError, Metadata, credentials, experimental, status } from '@grpc/grpc-js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HealthServiceClient, MaintenanceServiceClient } from '@ziti/proto';
import {
  INTERNAL_RPC_CALLERS,
  InternalCredentials,
  createInternalPki,
  grpcClient,
  healthService,
  internalChannelCredentials,
  internalCredentials,
  internalRequest,
  listenHttp,
  requireSecret,
  startGrpcServer,
  watchInternalTlsDir,
  writeInternalPki,
} from './index.js';
import { maintenanceService } from './maintenance.js';

type Check = (client: InstanceType<typeof HealthServiceClient>) => Promise<{ service: string; ready: boolean }>;
const check: Check = (client) =>
  new Promise((res, rej) => client.check({}, new Metadata(), { deadline: Date.now() + 3000 }, (err, r) => (err ? rej(err) : res(r))));

describe('the internal plane: gRPC', () => {
  let grpc: Awaited<ReturnType<typeof startGrpcServer>>;
  beforeAll(async () => {
    grpc = await startGrpcServer('127.0.0.1', 0, [healthService('policy')], 'policy');
  });
  afterAll(() => grpc.stop());

  it('answers the caller the table names (the gateway for HealthService)', async () => {
    expect(INTERNAL_RPC_CALLERS['/ziti.v1.HealthService/Check']).toEqual(['gateway']);
    const client = new HealthServiceClient(grpc.address, internalChannelCredentials('gateway', 'policy'));
    await expect(check(client)).resolves.toEqual({ service: 'policy', ready: true });
    client.close();
  });

  it('refuses a caller without a certificate: no call gets past the handshake', async () => {
    const client = new HealthServiceClient(grpc.address, credentials.createInsecure());
    await expect(check(client)).rejects.toMatchObject({ code: status.UNAVAILABLE });
    client.close();
  });

  it('refuses a caller whose certificate comes from another CA', async () => {
    const foreign = new InternalCredentials('gateway', createInternalPki().issue('gateway'));
    // It trusts the real CA (so the server is accepted) but presents a certificate of its own CA.
    const mixed = new InternalCredentials('gateway', { ...foreign.current(), caPem: internalCredentials('gateway').current().caPem });
    const creds = experimental.createCertificateProviderChannelCredentials(mixed, foreign, {});
    const client = new HealthServiceClient(grpc.address, creds);
    await expect(check(client)).rejects.toMatchObject({ code: status.UNAVAILABLE });
    client.close();
  });

  it('refuses a context calling a method that is not its own, with PERMISSION_DENIED', async () => {
    const client = new HealthServiceClient(grpc.address, internalChannelCredentials('posture', 'policy'));
    await expect(check(client)).rejects.toMatchObject({ code: status.PERMISSION_DENIED, details: expect.stringContaining('posture may not call /ziti.v1.HealthService/Check') });
    client.close();
  });

  it('refuses the same caller in process as over the network', async () => {
    const local = grpcClient(HealthServiceClient, grpc.address, 'session', 'policy');
    await expect(check(local)).rejects.toMatchObject({ code: status.PERMISSION_DENIED });
    local.close();
    const allowed = grpcClient(HealthServiceClient, grpc.address, 'gateway', 'policy');
    await expect(check(allowed)).resolves.toMatchObject({ ready: true });
    allowed.close();
  });

  it('refuses a streaming method to a caller that is not its own', async () => {
    const maint = await startGrpcServer('127.0.0.1', 0, [maintenanceService({ countEntities: async () => ({}), holdSnapshot: async () => { throw new Error('unused'); }, dumpSchema: async function* () {} })], 'policy');
    try {
      // Streaming calls always take the network: identity-auth may not dump policy's schema.
      const client = new MaintenanceServiceClient(maint.address, internalChannelCredentials('identity-auth', 'policy'));
      const err = await new Promise<ServiceError>((resolve) => {
        const stream = client.dumpSchema({ snapshotId: 'x' });
        stream.on('data', () => undefined);
        stream.on('error', resolve);
      });
      expect(err.code).toBe(status.PERMISSION_DENIED);
      client.close();
    } finally {
      await maint.stop();
    }
  });

  it('a client will not talk to a server that is not the context it expects', async () => {
    const client = new HealthServiceClient(grpc.address, internalChannelCredentials('gateway', 'pki-enrollment'));
    await expect(check(client)).rejects.toMatchObject({ code: status.UNAVAILABLE });
    client.close();
  });
});

describe('the internal plane: HTTP', () => {
  it('answers only the gateway; the probes answer anyone', async () => {
    const http = await listenHttp((_req, res) => res.end('{"ok":true}'), '127.0.0.1', 0, 'identity-auth');
    try {
      const login = `${http.url}/edge/client/v1/authenticate?method=password`;
      const anonymous = await internalRequest(login, { as: null, method: 'POST', body: '{}' });
      expect(anonymous.status).toBe(401);
      expect(anonymous.json.error).toMatchObject({ code: 'UNAUTHORIZED', requestId: expect.any(String) });
      expect(anonymous.headers.connection).toBe('close');
      const otherContext = await internalRequest(login, { as: 'policy', method: 'POST', body: '{}' });
      expect(otherContext.status).toBe(401);
      expect((await internalRequest(login, { as: 'gateway', method: 'POST', body: '{}' })).json).toEqual({ ok: true });
      expect((await internalRequest(`${http.url}/readyz`, { as: null })).status).toBe(200);
    } finally {
      await http.close();
    }
  });
});

describe('internal TLS material', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'ziti-internal-tls-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a cert-manager directory, refuses one that names another context, and follows a renewal', async () => {
    const dirs = writeInternalPki(dir, { names: ['policy', 'session'] });
    expect(() => watchInternalTlsDir(dirs.session, 'policy', () => undefined)).toThrow(/names "session", expected "policy"/);
    const lines: string[] = [];
    const watched = watchInternalTlsDir(dirs.policy, 'policy', (m) => lines.push(m), 20);
    try {
      const before = watched.credentials.fingerprint();
      let updates = 0;
      watched.credentials.onUpdate(() => updates++);
      // A half-written renewal (a key that is not the certificate's) is ignored, with one line.
      const renewed = createInternalPki().issue('policy');
      writeFileSync(path.join(dirs.policy, 'tls.crt'), renewed.certPem);
      await new Promise((r) => setTimeout(r, 80));
      expect(watched.credentials.fingerprint()).toBe(before);
      expect(lines.filter((l) => l.includes('keeping the current certificate'))).toHaveLength(1);
      writeFileSync(path.join(dirs.policy, 'tls.key'), renewed.keyPem);
      writeFileSync(path.join(dirs.policy, 'ca.crt'), renewed.caPem);
      await new Promise((r) => setTimeout(r, 80));
      expect(watched.credentials.current().certPem).toBe(renewed.certPem);
      expect(updates).toBe(1);
    } finally {
      watched.stop();
    }
  });

  it('refuses a key that is not the certificate\'s and a certificate of another CA', () => {
    const a = createInternalPki();
    const b = createInternalPki();
    const m = a.issue('policy');
    const other = b.issue('policy');
    expect(() => new InternalCredentials('policy', m).update({ ...m, keyPem: other.keyPem })).toThrow(/not the certificate's/);
    expect(() => new InternalCredentials('policy', m).update({ ...m, caPem: other.caPem })).toThrow(/not issued by the CA/);
  });
});

describe('secrets from the environment', () => {
  it('refuses placeholders and short values, naming the variable only', () => {
    expect(() => requireSecret({ ZITI_INTERNAL_SECRET: 'change-me' }, 'ZITI_INTERNAL_SECRET')).toThrow(/ZITI_INTERNAL_SECRET holds a placeholder/);
    expect(() => requireSecret({ ZITI_INTERNAL_SECRET: 'CHANGE_ME' }, 'ZITI_INTERNAL_SECRET')).toThrow(/placeholder/);
    expect(() => requireSecret({ ZITI_PKI_KEY: 'short-but-real' }, 'ZITI_PKI_KEY')).toThrow(/ZITI_PKI_KEY must be at least 32 characters/);
    expect(() => requireSecret({}, 'ZITI_PKI_KEY')).toThrow(/ZITI_PKI_KEY is required/);
    const good = 'x'.repeat(16) + 'Y'.repeat(16);
    expect(requireSecret({ K: good }, 'K')).toBe(good);
    try {
      requireSecret({ K: 'not-long-enough-secret' }, 'K');
    } catch (err) {
      expect((err as Error).message).not.toContain('not-long-enough-secret');
    }
  });
});

describe('the table of internal callers', () => {
  it('names the callers of every method the contexts serve, and no method that does not exist', () => {
    const proto = require('@ziti/proto') as Record<string, unknown>;
    const served = Object.entries(proto)
      .filter(([name, v]) => name.endsWith('ServiceService') && typeof v === 'object' && v !== null)
      .flatMap(([, def]) => Object.values(def as Record<string, { path: string }>).map((m) => m.path));
    expect(served.length).toBeGreaterThan(30);
    expect(served.filter((p) => !(p in INTERNAL_RPC_CALLERS))).toEqual([]);
    expect(Object.keys(INTERNAL_RPC_CALLERS).filter((p) => !served.includes(p))).toEqual([]);
  });
});
