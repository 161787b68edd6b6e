import { X509Certificate, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { connect, createServer } from 'node:tls';
import { type ServiceError, status } from '@grpc/grpc-js';
import { PkiEnrollmentServiceClient, type ServerCertificate } from '@ziti/proto';
import { type ContextName, internalChannelCredentials } from '@ziti/service-kit';
import { type TestService, pemToDers, startTestService } from './testing/harness.js';

describe('IssueCtrlCertificate (the router control listener, fabric)', () => {
  let t: TestService;
  const clients: PkiEnrollmentServiceClient[] = [];
  const as = (caller: ContextName) => {
    const c = new PkiEnrollmentServiceClient(t.grpcAddress, internalChannelCredentials(caller, 'pki-enrollment'));
    clients.push(c);
    return c;
  };
  const issue = (req: { sans: string[]; publicKeyPem: string }, caller: ContextName = 'fabric') =>
    new Promise<ServerCertificate>((resolve, reject) => as(caller).issueCtrlCertificate(req, (err: ServiceError | null, res?: ServerCertificate) => (err ? reject(err) : resolve(res!))));
  const spki = (key: { publicKey: import('node:crypto').KeyObject }) => key.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const ec = (namedCurve: string) => generateKeyPairSync('ec', { namedCurve });

  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(async () => {
    clients.forEach((c) => c.close());
    await t?.stop();
  });

  it('issues a serverAuth certificate for the key and names given, chained to the root every router trusts', async () => {
    const keys = ec('P-256');
    const creds = await issue({ sans: ['ctrl.example.test', '10.1.2.3', '::1'], publicKeyPem: spki(keys) });
    expect(JSON.stringify(creds)).not.toContain('PRIVATE KEY');
    const [leafDer, intDer] = pemToDers(creds.certPem);
    expect(pemToDers(creds.certPem)).toHaveLength(2);
    const leaf = new X509Certificate(leafDer!);
    const int = new X509Certificate(intDer!);
    const root = new X509Certificate(creds.rootCaPem);
    expect(leaf.verify(int.publicKey) && int.verify(root.publicKey)).toBe(true);
    expect(leaf.checkPrivateKey(keys.privateKey)).toBe(true);
    expect(leaf.subjectAltName).toBe('DNS:ctrl.example.test, IP Address:10.1.2.3, IP Address:0:0:0:0:0:0:0:1');
    expect(leaf.keyUsage ?? []).toContain('1.3.6.1.5.5.7.3.1');
    expect(leaf.keyUsage ?? []).not.toContain('1.3.6.1.5.5.7.3.2');
    expect(leaf.ca).toBe(false);
    expect(creds.caBundlePem).toBe(creds.rootCaPem + int.toString());
    // the same bundle a router gets at enrollment (`identity.ca`): a TLS client trusting only the root accepts the listener
    const server = createServer({ key: keys.privateKey.export({ type: 'pkcs8', format: 'pem' }), cert: creds.certPem, ALPNProtocols: ['ziti-ctrl'] });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (server.address() as { port: number }).port;
      const authorized = await new Promise<boolean>((resolve, reject) => {
        const s = connect({ host: '127.0.0.1', port, servername: 'ctrl.example.test', ca: creds.caBundlePem, ALPNProtocols: ['ziti-ctrl'] }, () => {
          resolve(s.authorized);
          s.end();
        });
        s.on('error', reject);
      });
      expect(authorized).toBe(true);
    } finally {
      server.close();
    }
  });

  it('takes EC P-384 and RSA 2048 keys', async () => {
    const p384 = ec('P-384');
    expect(new X509Certificate((await issue({ sans: ['ctrl'], publicKeyPem: spki(p384) })).certPem).checkPrivateKey(p384.privateKey)).toBe(true);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    expect(new X509Certificate((await issue({ sans: ['ctrl'], publicKeyPem: spki(rsa) })).certPem).checkPrivateKey(rsa.privateKey)).toBe(true);
  });

  it('refuses other keys, private keys and bad names with INVALID_ARGUMENT', async () => {
    const good = spki(ec('P-256'));
    const refused = (req: { sans: string[]; publicKeyPem: string }) => expect(issue(req)).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
    await refused({ sans: ['ctrl'], publicKeyPem: spki(ec('secp256k1')) });
    await refused({ sans: ['ctrl'], publicKeyPem: spki(generateKeyPairSync('rsa', { modulusLength: 1024 })) });
    await refused({ sans: ['ctrl'], publicKeyPem: spki(generateKeyPairSync('ed25519')) });
    const priv = ec('P-256').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    await refused({ sans: ['ctrl'], publicKeyPem: priv });
    await refused({ sans: ['ctrl'], publicKeyPem: '' });
    await refused({ sans: ['ctrl'], publicKeyPem: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----' });
    await refused({ sans: ['ctrl'], publicKeyPem: 'x'.repeat(100_000) });
    await refused({ sans: [], publicKeyPem: good });
    await refused({ sans: ['*.example.test'], publicKeyPem: good });
    await refused({ sans: ['bad name'], publicKeyPem: good });
    await refused({ sans: ['https://ctrl.example.test'], publicKeyPem: good });
    await refused({ sans: ['a\u0000b'], publicKeyPem: good });
    await refused({ sans: ['-leading.example'], publicKeyPem: good });
    await refused({ sans: [`${'a'.repeat(64)}.example`], publicKeyPem: good });
    await refused({ sans: Array.from({ length: 33 }, (_, i) => `h${i}.example`), publicKeyPem: good });
    expect(pemToDers((await issue({ sans: Array.from({ length: 32 }, (_, i) => `h${i}.example`), publicKeyPem: good })).certPem)).toHaveLength(2);
    // the public half of a key is what createPublicKey would have derived from the private one: still refused as a private key
    expect(createPublicKey(priv).type).toBe('public');
  });

  it('is for the fabric context only', async () => {
    const req = { sans: ['ctrl'], publicKeyPem: spki(ec('P-256')) };
    for (const caller of ['gateway', 'policy', 'identity-auth', 'session'] as ContextName[]) {
      await expect(issue(req, caller)).rejects.toMatchObject({ code: status.PERMISSION_DENIED });
    }
  });
});
