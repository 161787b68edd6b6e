import { X509Certificate, createPrivateKey } from 'node:crypto';
import { connect, createServer } from 'node:tls';
import { credentials } from '@grpc/grpc-js';
import { createInProcessBus, createMemoryCache } from '@ziti/messaging';
import { PkiEnrollmentServiceClient, type ServerCredentials, type SigningKey } from '@ziti/proto';
import { type TestDatabase, createTestDatabase, testInfra } from '@ziti/test-kit';
import { decodeProtectedHeader, decodeJwt, jwtVerify } from 'jose';
import { Client } from 'pg';
import { KeyVault } from './crypto/secrets.js';
import { ControllerPki } from './domain/pki.js';
import { runMigrations, startService, type RunningService } from './index.js';
import { openDatabase } from './store/db.js';
import { PrismaUnitOfWork } from './store/unit-of-work.js';
import { FakeDirectory, SECRET } from './testing/harness.js';

// The generated client methods are overloaded, so the callback's type is given at each call site.
const unary = <Req, Res>(fn: (...args: any[]) => unknown, req: Req) =>
  new Promise<Res>((resolve, reject) => fn(req, (err: Error | null, res: Res) => (err ? reject(err) : resolve(res))));

describe('controller PKI', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase((await testInfra()).databaseUrl);
    await runMigrations(db.url);
  });
  afterAll(() => db?.drop());

  const open = () => {
    const database = openDatabase(db.url, () => undefined);
    return { database, uow: new PrismaUnitOfWork(database.prisma, database.pool, { publishOnCommit: (_events, commit) => commit }) };
  };

  it('is created once, even by replicas starting together, and reused afterwards', async () => {
    const a = open();
    const b = open();
    try {
      const [pa, pb] = await Promise.all([ControllerPki.open(a.uow, new KeyVault(SECRET)), ControllerPki.open(b.uow, new KeyVault(SECRET))]);
      expect(pa.root.certPem).toBe(pb.root.certPem);
      expect(pa.intermediate.certPem).toBe(pb.intermediate.certPem);
      expect(pa.trustDomain).toBe(pb.trustDomain);
      const again = await ControllerPki.open(a.uow, new KeyVault(SECRET));
      expect(again.root.certPem).toBe(pa.root.certPem);

      const root = new X509Certificate(pa.root.certPem);
      const int = new X509Certificate(pa.intermediate.certPem);
      expect(root.ca && int.ca).toBe(true);
      expect(int.checkIssued(root) && int.verify(root.publicKey)).toBe(true);
      expect(root.subjectAltName).toBe(`URI:spiffe://${pa.trustDomain}`);
    } finally {
      await a.database.close();
      await b.database.close();
    }
  });

  it('keeps private keys sealed at rest, readable only with the same key-encryption secret', async () => {
    const pg = new Client({ connectionString: db.url });
    await pg.connect();
    try {
      const { rows } = await pg.query('SELECT name, key_sealed FROM pki_enrollment.pki_material');
      expect(rows.map((r) => r.name).sort()).toEqual(['intermediate', 'root']);
      for (const r of rows) {
        expect(r.key_sealed).toMatch(/^v1\./);
        expect(r.key_sealed).not.toContain('PRIVATE KEY');
      }
    } finally {
      await pg.end();
    }
    const c = open();
    try {
      await expect(ControllerPki.open(c.uow, new KeyVault('another-secret'))).rejects.toThrow(/ZITI_PKI_KEY/);
    } finally {
      await c.database.close();
    }
  });

  describe('over gRPC', () => {
    let service: RunningService;
    let client: PkiEnrollmentServiceClient;
    beforeAll(async () => {
      service = await startService({
        databaseUrl: db.url, bus: createInProcessBus(), cache: createMemoryCache(), internalSecret: SECRET,
        http: { host: '127.0.0.1', port: 0 }, grpc: { host: '127.0.0.1', port: 0 }, identityDirectory: new FakeDirectory(), log: () => undefined,
      });
      client = new PkiEnrollmentServiceClient(service.grpcAddress, credentials.createInsecure());
    });
    afterAll(async () => {
      client?.close();
      await service?.stop();
    });

    it('GetServerCredentials: a key and a chain to the root covering the requested names, stable until more names are needed', async () => {
      const creds = await unary<object, ServerCredentials>(client.getServerCredentials.bind(client), { sans: ['ctrl.example.test'], advertisedAddress: 'ctrl.example.test:1280' });
      const [leafPem, intPem] = creds.certPem.split(/(?<=-----END CERTIFICATE-----\n)/);
      const leaf = new X509Certificate(leafPem!);
      const int = new X509Certificate(intPem!);
      const root = new X509Certificate(creds.rootCaPem);
      expect(leaf.checkIssued(int) && leaf.verify(int.publicKey) && int.verify(root.publicKey)).toBe(true);
      expect(leaf.checkPrivateKey(createPrivateKey(creds.keyPem))).toBe(true);
      expect(leaf.checkHost('ctrl.example.test')).toBe('ctrl.example.test');
      expect(leaf.checkIP('127.0.0.1')).toBe('127.0.0.1');
      expect(creds.caBundlePem).toBe(creds.rootCaPem + intPem);

      const same = await unary<object, ServerCredentials>(client.getServerCredentials.bind(client), { sans: ['localhost'], advertisedAddress: 'ctrl.example.test:1280' });
      expect(same.certPem).toBe(creds.certPem);
      const more = await unary<object, ServerCredentials>(client.getServerCredentials.bind(client), { sans: ['other.example.test'], advertisedAddress: 'ctrl.example.test:1280' });
      const wider = new X509Certificate(more.certPem);
      expect(wider.checkHost('other.example.test')).toBe('other.example.test');
      expect(wider.checkHost('ctrl.example.test')).toBe('ctrl.example.test');

      // a TLS client that trusts only the root accepts the served chain
      const server = createServer({ key: more.keyPem, cert: more.certPem });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      try {
        const port = (server.address() as { port: number }).port;
        const ok = await new Promise<boolean>((resolve, reject) => {
          const s = connect({ host: '127.0.0.1', port, servername: 'other.example.test', ca: more.rootCaPem }, () => {
            resolve(s.authorized);
            s.end();
          });
          s.on('error', reject);
        });
        expect(ok).toBe(true);
      } finally {
        server.close();
      }
    });

    it('GetSigningKey: the server key, kid = SHA-1 of its certificate, ES256, the recorded issuer', async () => {
      const key = await unary<object, SigningKey>(client.getSigningKey.bind(client), {});
      const cert = new X509Certificate(key.certPem);
      expect(key.kid).toBe(cert.fingerprint.replace(/:/g, '').toLowerCase());
      expect(key.alg).toBe('ES256');
      expect(key.issuer).toBe('https://ctrl.example.test:1280');
      expect(cert.checkPrivateKey(createPrivateKey(key.keyPem))).toBe(true);
    });

    it('signs the network JWT with the served certificate, with the issuer the gateway reported', async () => {
      const res = await fetch(`${service.httpUrl}/edge/client/v1/network-jwts`);
      const body = (await res.json()) as any;
      const token = body.data[0].token as string;
      const key = await unary<object, SigningKey>(client.getSigningKey.bind(client), {});
      await jwtVerify(token, new X509Certificate(key.certPem).publicKey);
      expect(decodeProtectedHeader(token).kid).toBe(key.kid);
      expect(decodeJwt(token)).toMatchObject({ em: 'network', iss: 'https://ctrl.example.test:1280/', sub: 'https://ctrl.example.test:1280/', aud: ['openziti-enroller'] });
    });
  });
});
