import { type Client, type ServiceError, Metadata, credentials, status } from '@grpc/grpc-js';
import https from 'node:https';
import { join } from 'node:path';
import * as proto from '@ziti/proto';
import {
  type ContextName,
  INTERNAL_RPC_CALLERS,
  INTERNAL_SERVICE_OWNERS,
  InternalCredentials,
  createInternalPki,
  holdInternalCredentials,
  internalChannelCredentials,
  internalChannelOptions,
  readInternalTlsDir,
} from '@ziti/service-kit';
import { type Cluster, CONTEXTS, startCluster } from './support/cluster.js';

/**
 * The internal plane of the controller run as separate processes (the deployment of
 * support/cluster.ts, one internal certificate per process as cert-manager would issue them):
 * nothing behind the gateway answers a caller without an internal certificate, a context calling
 * an RPC that is not its own is refused, no RPC answers a private key, and a context's HTTP port
 * answers only the gateway, so no limit of the gateway can be skipped.
 */

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startCluster(join(__dirname, 'internal-plane-logs'));
  // This process calls as the cluster's contexts, with their certificates (read from their directories).
  holdInternalCredentials(...(Object.entries(cluster.internalTls) as [ContextName, string][]).map(([name, dir]) => new InternalCredentials(name, readInternalTlsDir(dir))));
}, 600_000);
afterAll(() => cluster?.close(), 120_000);

type MethodDef = { path: string; requestStream: boolean; responseStream: boolean; requestDeserialize(b: Buffer): object };
type Ctor = { new (address: string, creds: ReturnType<typeof credentials.createInsecure>, options?: object): Client; service: Record<string, MethodDef> };

/** A method's request with every field at its default (the empty message, decoded). */
const emptyRequest = (def: MethodDef) => def.requestDeserialize(Buffer.alloc(0));

/** Every generated service client, by its package-qualified service name. */
const clients: Record<string, Ctor> = Object.fromEntries(
  Object.entries(proto)
    .filter(([name]) => name.endsWith('ServiceClient'))
    .map(([, ctor]) => {
      const c = ctor as unknown as Ctor;
      const path = Object.values(c.service)[0]!.path;
      return [path.slice(1, path.lastIndexOf('/')), c];
    }),
);

const grpcAddress = (ctx: ContextName) => {
  const replica = cluster.replicas.find((r) => r.context === ctx)!;
  return `127.0.0.1:${replica.grpcPort}`;
};
const httpUrl = (ctx: ContextName) => `https://127.0.0.1:${cluster.replicas.find((r) => r.context === ctx)!.httpPort}`;

/** One unary call, answering the response or the error (never throwing). */
function unary(Client: Ctor, address: string, creds: ReturnType<typeof credentials.createInsecure>, server: string, method: string, request: object) {
  const client = new Client(address, creds, internalChannelOptions(server as ContextName));
  const name = Object.entries(Client.service).find(([, d]) => d.path.endsWith(`/${method}`))![0];
  return new Promise<{ err: ServiceError | null; res?: unknown }>((resolve) => {
    (client as unknown as Record<string, (...a: unknown[]) => void>)[name]!(request, new Metadata(), { deadline: Date.now() + 10_000 }, (err: ServiceError | null, res: unknown) => {
      client.close();
      resolve({ err, res });
    });
  });
}

const PRIVATE_KEY = /PRIVATE KEY/;

describe('the internal plane of separate processes', () => {
  it('answers no gRPC caller without an internal certificate, or with one of another CA', async () => {
    const foreign = new InternalCredentials('gateway', createInternalPki().issue('gateway'));
    const genuine = cluster.internalTls.gateway;
    const trusting = new InternalCredentials('gateway', { ...foreign.current(), caPem: readInternalTlsDir(genuine).caPem });
    for (const ctx of CONTEXTS) {
      const Health = clients['ziti.v1.HealthService']!;
      const none = await unary(Health, grpcAddress(ctx), credentials.createInsecure(), ctx, 'Check', {});
      expect(none.err?.code).toBe(status.UNAVAILABLE);
      const other = await unary(Health, grpcAddress(ctx), credentials.createSsl(Buffer.from(trusting.current().caPem), Buffer.from(foreign.current().keyPem), Buffer.from(foreign.current().certPem), { checkServerIdentity: () => undefined }), ctx, 'Check', {});
      expect(other.err?.code).toBe(status.UNAVAILABLE);
      const gateway = await unary(Health, grpcAddress(ctx), internalChannelCredentials('gateway', ctx), ctx, 'Check', {});
      expect(gateway.err).toBeNull();
    }
  });

  it('refuses every context the RPCs that are not its own, and answers none of them a private key', async () => {
    const answers: string[] = [];
    let refused = 0;
    for (const [path, callers] of Object.entries(INTERNAL_RPC_CALLERS)) {
      const service = path.slice(1, path.lastIndexOf('/'));
      const method = path.slice(path.lastIndexOf('/') + 1);
      const Client = clients[service]!;
      const def = Object.values(Client.service).find((d) => d.path === path)!;
      if (def.requestStream || def.responseStream) continue;
      const owners = INTERNAL_SERVICE_OWNERS[service] ? [INTERNAL_SERVICE_OWNERS[service]!] : [...CONTEXTS];
      for (const owner of owners) {
        for (const caller of ['gateway', ...CONTEXTS] as ContextName[]) {
          if (caller === owner) continue;
          const { err, res } = await unary(Client, grpcAddress(owner), internalChannelCredentials(caller, owner), owner, method, emptyRequest(def));
          if (!callers.includes(caller)) {
            expect({ path, caller, code: err?.code, details: err?.code === status.PERMISSION_DENIED ? '' : err?.details }).toEqual({ path, caller, code: status.PERMISSION_DENIED, details: '' });
            refused++;
          }
          answers.push(JSON.stringify(res ?? null), err?.details ?? '', JSON.stringify(err?.metadata?.getMap() ?? {}));
        }
      }
    }
    expect(refused).toBeGreaterThan(100);
    expect(answers.filter((a) => PRIVATE_KEY.test(a))).toEqual([]);
  });

  it("streams no private key in pki-enrollment's schema dump (the PKI's keys are sealed)", async () => {
    const Maintenance = clients['ziti.v1.MaintenanceService']!;
    const client = new Maintenance(grpcAddress('pki-enrollment'), internalChannelCredentials('gateway', 'pki-enrollment'), internalChannelOptions('pki-enrollment'));
    const lines: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const stream = (client as unknown as { dumpSchema(r: object): NodeJS.EventEmitter }).dumpSchema({ snapshotId: '' });
      stream.on('data', (chunk: { lines: string[] }) => lines.push(...chunk.lines));
      stream.on('end', resolve);
      stream.on('error', reject);
    });
    client.close();
    expect(lines.some((l) => l.includes('pki_material'))).toBe(true);
    expect(lines.filter((l) => PRIVATE_KEY.test(l))).toEqual([]);
  });

  it("answers a context's HTTP port only to the gateway: a login sent straight to identity-auth is refused", async () => {
    const login = `${httpUrl('identity-auth')}/edge/client/v1/authenticate?method=password`;
    const body = JSON.stringify({ username: cluster.admin.username, password: cluster.admin.password });
    const post = (identity?: { cert: string; key: string }) =>
      new Promise<{ status: number; body: any }>((resolve, reject) => {
        const req = https.request(login, { method: 'POST', agent: false, rejectUnauthorized: false, headers: { 'content-type': 'application/json' }, ...identity }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString() || 'null') }));
        });
        req.on('error', reject);
        req.end(body);
      });
    const anonymous = await post();
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe('UNAUTHORIZED');
    const policy = readInternalTlsDir(cluster.internalTls.policy);
    expect((await post({ cert: policy.certPem, key: policy.keyPem })).status).toBe(401);
    // Through the gateway, the same login works (over mutual TLS to identity-auth).
    const gateway = cluster.gateways[0]!;
    const viaGateway = await new Promise<number>((resolve, reject) => {
      const req = https.request(`${gateway.url}/edge/client/v1/authenticate?method=password`, { method: 'POST', agent: false, rejectUnauthorized: false, headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(body);
    });
    expect(viaGateway).toBe(200);
  });
});
