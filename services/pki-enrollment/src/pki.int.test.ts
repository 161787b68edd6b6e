import { X509Certificate, createPublicKey } from 'node:crypto';
import { connect, createServer } from 'node:tls';
import { type ServiceError, status } from '@grpc/grpc-js';
import { fromGrpcError } from '@ziti/errors';
import { createInProcessBus, createMemoryCache } from '@ziti/messaging';
import { PkiEnrollmentServiceClient, type ServerCertificate, type SigningCertificate } from '@ziti/proto';
import { type ContextName, internalChannelCredentials, internalRequest } from '@ziti/service-kit';
import { EDGE_SERVER_KEY_PURPOSE, deriveEcKey } from '@ziti/x509';
import { type TestDatabase, createTestDatabase, testInfra } from '@ziti/test-kit';
import { decodeProtectedHeader, decodeJwt, jwtVerify } from 'jose';
import { Client } from 'pg';
import { KeyVault } from './crypto/secrets.js';
import { ControllerPki } from './domain/pki.js';
import { runMigrations, startService, type RunningService } from './index.js';
import { openDatabase } from './store/db.js';
import { PrismaUnitOfWork } from './store/unit-of-work.js';
import { FakeDirectory, SECRET, SERVER_KEY_SECRET } from './testing/harness.js';

const pkiOptions = { serverKey: deriveEcKey(SERVER_KEY_SECRET, EDGE_SERVER_KEY_PURPOSE) };

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
      const [pa, pb] = await Promise.all([ControllerPki.open(a.uow, new KeyVault(SECRET), pkiOptions), ControllerPki.open(b.uow, new KeyVault(SECRET), pkiOptions)]);
      expect(pa.root.certPem).toBe(pb.root.certPem);
      expect(pa.intermediate.certPem).toBe(pb.intermediate.certPem);
      expect(pa.trustDomain).toBe(pb.trustDomain);
      const again = await ControllerPki.open(a.uow, new KeyVault(SECRET), pkiOptions);
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
      await expect(ControllerPki.open(c.uow, new KeyVault('another-secret'), pkiOptions)).rejects.toThrow(/ZITI_PKI_KEY/);
    } finally {
      await c.database.close();
    }
  });

  describe('over gRPC', () => {
    let service: RunningService;
    const clients: PkiEnrollmentServiceClient[] = [];
    // A client calling as `caller` (its internal certificate), over the network.
    const as = (caller: ContextName) => {
      const c = new PkiEnrollmentServiceClient(service.grpcAddress, internalChannelCredentials(caller, 'pki-enrollment'));
      clients.push(c);
      return c;
    };
    const serverKey = deriveEcKey(SERVER_KEY_SECRET, EDGE_SERVER_KEY_PURPOSE);
    const publicKeyPem = createPublicKey(serverKey).export({ type: 'spki', format: 'pem' }).toString();
    beforeAll(async () => {
      service = await startService({
        databaseUrl: db.url, bus: createInProcessBus(), cache: createMemoryCache(), internalSecret: SECRET, serverKeySecret: SERVER_KEY_SECRET,
        http: { host: '127.0.0.1', port: 0 }, grpc: { host: '127.0.0.1', port: 0 }, identityDirectory: new FakeDirectory(), log: () => undefined,
      });
    });
    afterAll(async () => {
      clients.forEach((c) => c.close());
      await service?.stop();
    });

    it('IssueServerCertificate: a chain to the root for the gateway\'s own key, covering the requested names, stable until more names are needed', async () => {
      const gateway = as('gateway');
      const issue = (sans: string[]) => unary<object, ServerCertificate>(gateway.issueServerCertificate.bind(gateway), { sans, advertisedAddress: 'ctrl.example.test:1280', publicKeyPem });
      const creds = await issue(['ctrl.example.test']);
      expect(JSON.stringify(creds)).not.toContain('PRIVATE KEY');
      const [leafPem, intPem] = creds.certPem.split(/(?<=-----END CERTIFICATE-----\n)/);
      const leaf = new X509Certificate(leafPem!);
      const int = new X509Certificate(intPem!);
      const root = new X509Certificate(creds.rootCaPem);
      expect(leaf.checkIssued(int) && leaf.verify(int.publicKey) && int.verify(root.publicKey)).toBe(true);
      expect(leaf.checkPrivateKey(serverKey)).toBe(true);
      expect(leaf.checkHost('ctrl.example.test')).toBe('ctrl.example.test');
      expect(leaf.checkIP('127.0.0.1')).toBe('127.0.0.1');
      expect(creds.caBundlePem).toBe(creds.rootCaPem + intPem);

      expect((await issue(['localhost'])).certPem).toBe(creds.certPem);
      const more = await issue(['other.example.test']);
      const wider = new X509Certificate(more.certPem);
      expect(wider.checkHost('other.example.test')).toBe('other.example.test');
      expect(wider.checkHost('ctrl.example.test')).toBe('ctrl.example.test');

      // a TLS client that trusts only the root accepts the chain served with the gateway's key
      const server = createServer({ key: serverKey.export({ type: 'pkcs8', format: 'pem' }), cert: more.certPem });
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

    it('IssueServerCertificate: refuses a key that is not the one derived from the server key secret', async () => {
      const gateway = as('gateway');
      const other = createPublicKey(deriveEcKey('another-server-key-secret-of-32-chars', EDGE_SERVER_KEY_PURPOSE)).export({ type: 'spki', format: 'pem' }).toString();
      await expect(unary(gateway.issueServerCertificate.bind(gateway), { sans: [], advertisedAddress: 'ctrl.example.test:1280', publicKeyPem: other })).rejects.toMatchObject({ code: status.FAILED_PRECONDITION });
    });

    it('GetSigningCertificate: the signing certificate only, kid = SHA-1 of it, ES256, the recorded issuer', async () => {
      const policy = as('policy');
      const cert = await unary<object, SigningCertificate>(policy.getSigningCertificate.bind(policy), {});
      expect(JSON.stringify(cert)).not.toContain('PRIVATE KEY');
      const x = new X509Certificate(cert.certPem);
      expect(cert.kid).toBe(x.fingerprint.replace(/:/g, '').toLowerCase());
      expect(cert.alg).toBe('ES256');
      expect(cert.issuer).toBe('https://ctrl.example.test:1280');
      expect(x.checkPrivateKey(serverKey)).toBe(true);
    });

    it('SignSessionTokens: session tokens only, signed with the server key, for the session context only', async () => {
      const session = as('session');
      const input = { id: 'c1', serviceId: 's1', apiSessionId: 'as1', identityId: 'id1', sessionType: 'Dial', legacy: true, issuedAt: 1795341600, expiresAt: 1826877600 };
      const { tokens } = await unary<object, { tokens: string[] }>(session.signSessionTokens.bind(session), { tokens: [input, { ...input, id: 'c2', sessionType: 'Bind' }] });
      expect(tokens).toHaveLength(2);
      const { payload, protectedHeader } = await jwtVerify(tokens[0]!, createPublicKey(serverKey));
      expect(protectedHeader).toMatchObject({ alg: 'ES256', typ: 'JWT' });
      expect(payload).toEqual({ iss: 'https://ctrl.example.test:1280', sub: 's1', aud: ['openziti'], iat: 1795341600, exp: 1826877600, jti: 'c1', z_asid: 'as1', z_iid: 'id1', z_t: 's', z_st: 'Dial', z_leg: true });
      expect(decodeJwt(tokens[1]!)).toMatchObject({ jti: 'c2', z_st: 'Bind' });
      const refused = await unary(session.signSessionTokens.bind(session), { tokens: [{ ...input, sessionType: 'Enroll' }] }).catch((e: ServiceError) => fromGrpcError(e));
      expect(refused).toMatchObject({ code: 'COULD_NOT_VALIDATE', cause: { field: 'sessionType', value: 'Enroll' } });
      const identityAuth = as('identity-auth');
      await expect(unary(identityAuth.signSessionTokens.bind(identityAuth), { tokens: [input] })).rejects.toMatchObject({ code: status.PERMISSION_DENIED });
    });

    it('signs the network JWT with the served certificate, with the issuer the gateway reported', async () => {
      const res = await internalRequest(`${service.httpUrl}/edge/client/v1/network-jwts`, { as: 'gateway' });
      const token = res.json.data[0].token as string;
      const policy = as('policy');
      const cert = await unary<object, SigningCertificate>(policy.getSigningCertificate.bind(policy), {});
      await jwtVerify(token, new X509Certificate(cert.certPem).publicKey);
      expect(decodeProtectedHeader(token).kid).toBe(cert.kid);
      expect(decodeJwt(token)).toMatchObject({ em: 'network', iss: 'https://ctrl.example.test:1280/', sub: 'https://ctrl.example.test:1280/', aud: ['openziti-enroller'] });
    });
  });
});
