import { X509Certificate, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, experimental, status } from '@grpc/grpc-js';
import { internalCredentials } from '@ziti/service-kit';
import { EDGE_SERVER_KEY_PURPOSE, deriveEcKey } from '@ziti/x509';
import { CLIENT_CERT_HEADER, verifyClientCertChain } from '@ziti/http-kit';
import { type InProcessEventBus, createInProcessBus, createMemoryCache } from '@ziti/messaging';
import { PkiEnrollmentServiceService } from '@ziti/proto';
import { type RunningGateway, startGateway } from './index.js';
import { issueCertificate } from './pki/x509.js';
import { SECRET, call, startFakeIdentityAuth, startFakeUpstream } from './testing/harness.js';

const SERVER_KEY_SECRET = 'gateway-test-server-key-secret-0123456789';

/**
 * A pki-enrollment that is unavailable for its first two calls, then certifies the public key the
 * gateway sends (with a CA of its own), as IssueServerCertificate does; the gateway keeps its key.
 */
async function startFakePki() {
  const requests: { sans: string[]; advertisedAddress: string; publicKeyPem: string }[] = [];
  let calls = 0;
  let issuedPem = '';
  const caKeys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const now = Date.now();
  const caPem = issueCertificate({ commonName: 'Fake Root CA', publicKey: caKeys.publicKey, selfPrivateKey: caKeys.privateKey, notBefore: new Date(now - 60_000), notAfter: new Date(now + 86_400_000), isCa: true });
  const server = new Server();
  server.addService(PkiEnrollmentServiceService, {
    issueServerCertificate: (c: { request: { sans: string[]; advertisedAddress: string; publicKeyPem: string } }, cb: (err: unknown, res?: unknown) => void) => {
      calls += 1;
      if (calls <= 2) return cb({ code: status.UNAVAILABLE, details: 'starting' });
      requests.push(c.request);
      issuedPem = issueCertificate({
        commonName: 'localhost', publicKey: createPublicKey(c.request.publicKeyPem), notBefore: new Date(now - 60_000), notAfter: new Date(now + 86_400_000), isCa: false,
        issuer: { commonName: 'Fake Root CA', privateKey: caKeys.privateKey, publicKey: caKeys.publicKey }, sans: c.request.sans,
      });
      cb(null, { certPem: issuedPem, rootCaPem: caPem, caBundlePem: caPem });
    },
  } as never);
  const pkiIdentity = internalCredentials('pki-enrollment');
  const port: number = await new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', experimental.createCertificateProviderServerCredentials(pkiIdentity, pkiIdentity, true), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return { address: `127.0.0.1:${port}`, requests, caPem, issuedPem: () => issuedPem, calls: () => calls, close: () => new Promise<void>((r) => server.tryShutdown(() => r())) };
}

function clientCertificate() {
  const caKeys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const now = Date.now();
  const caPem = issueCertificate({ commonName: 'Client CA', publicKey: caKeys.publicKey, selfPrivateKey: caKeys.privateKey, notBefore: new Date(now - 60_000), notAfter: new Date(now + 86_400_000), isCa: true });
  const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const certPem = issueCertificate({
    commonName: 'device', publicKey: keys.publicKey, notBefore: new Date(now - 60_000), notAfter: new Date(now + 86_400_000), isCa: false,
    issuer: { commonName: 'Client CA', privateKey: caKeys.privateKey, publicKey: createPublicKey(caKeys.privateKey) },
  });
  return { certPem: certPem + caPem, keyPem: keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), leaf: new X509Certificate(certPem), ca: new X509Certificate(caPem) };
}

describe('gateway with the controller PKI of pki-enrollment', () => {
  let dir: string;
  let pki: Awaited<ReturnType<typeof startFakePki>>;
  let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
  let pkiUpstream: Awaited<ReturnType<typeof startFakeUpstream>>;
  let identityAuth: Awaited<ReturnType<typeof startFakeIdentityAuth>>;
  let bus: InProcessEventBus;
  let gw: RunningGateway;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-remote-'));
    pki = await startFakePki();
    upstream = await startFakeUpstream();
    pkiUpstream = await startFakeUpstream('pki-enrollment');
    identityAuth = await startFakeIdentityAuth();
    bus = createInProcessBus();
    gw = await startGateway({
      bus, cache: createMemoryCache(), internalSecret: SECRET, serverKeySecret: SERVER_KEY_SECRET, listen: { host: '127.0.0.1', port: 0 }, dataDir: join(dir, 'unused'),
      extraSans: ['ctrl.example.test'], pkiEnrollmentGrpc: pki.address,
      upstreams: { 'identity-auth': upstream.url, 'pki-enrollment': pkiUpstream.url }, identityAuthGrpc: identityAuth.address,
      instanceId: 'gw-remote', version: 'v1.2.3', log: () => undefined,
    });
  });

  afterAll(async () => {
    await gw?.stop();
    await pki?.close();
    await upstream?.close();
    await pkiUpstream?.close();
    await identityAuth?.close();
    await bus?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const last = () => upstream.requests[upstream.requests.length - 1]!;

  it('waits for pki-enrollment, serves its certificate, and reports its advertised address and names', async () => {
    expect(pki.calls()).toBe(3);
    // Only the public key of the key derived from the server key secret travels; the certificate is served with that key.
    const publicKeyPem = createPublicKey(deriveEcKey(SERVER_KEY_SECRET, EDGE_SERVER_KEY_PURPOSE)).export({ type: 'spki', format: 'pem' }).toString();
    expect(pki.requests[0]).toEqual({ sans: ['localhost', '127.0.0.1', '::1', 'ctrl.example.test'], advertisedAddress: `127.0.0.1:${gw.port}`, publicKeyPem });
    expect(JSON.stringify(pki.requests)).not.toContain('PRIVATE KEY');
    expect(gw.caCertPem).toBe(pki.caPem);
    const r = await call(gw, { path: '/version' });
    expect(r.status).toBe(200);
    expect(existsSync(join(dir, 'unused'))).toBe(false);
  });

  it('forwards the presented client chain, signed, to certificate authentication and enrollment, and nowhere else', async () => {
    const client = clientCertificate();
    await call(gw, { method: 'POST', path: '/authenticate?method=cert', headers: { 'content-type': 'application/json' }, body: '{}', clientCert: client });
    const token = last().headers[CLIENT_CERT_HEADER] as string;
    const chain = verifyClientCertChain(SECRET, token, last().headers['x-ziti-request-id'] as string);
    expect(chain[0]).toEqual(client.leaf.raw);
    expect(chain.map((d) => new X509Certificate(d).subject)).toEqual([client.leaf.subject, client.ca.subject]);

    // pki-enrollment's routes reach the upstream that proves it is pki-enrollment.
    const lastPki = () => pkiUpstream.requests[pkiUpstream.requests.length - 1]!;
    await call(gw, { method: 'POST', path: '/edge/client/v1/enroll/ca', clientCert: client });
    expect(lastPki().url).toBe('/edge/client/v1/enroll/ca');
    expect(lastPki().headers[CLIENT_CERT_HEADER]).toBeDefined();

    await call(gw, { path: '/edge/client/v1/network-jwts', clientCert: client });
    expect(lastPki().url).toBe('/edge/client/v1/network-jwts');
    expect(lastPki().headers[CLIENT_CERT_HEADER]).toBeUndefined();
  });

  it('never forwards an inbound x-ziti-client-cert header', async () => {
    await call(gw, { method: 'POST', path: '/authenticate?method=cert', headers: { 'content-type': 'application/json', [CLIENT_CERT_HEADER]: 'forged.value' }, body: '{}' });
    expect(last().headers[CLIENT_CERT_HEADER]).toBeUndefined();
  });

  it('passes Authorization: Bearer tokens (at most three) to identity-auth with the session token', async () => {
    await call(gw, { path: '/edge/management/v1/identities', headers: { 'zt-session': 'good-bearer', authorization: 'Bearer ext-1' } });
    expect(identityAuth.calls[identityAuth.calls.length - 1]).toBe('good-bearer');
    expect(identityAuth.bearerTokens[identityAuth.bearerTokens.length - 1]).toEqual(['ext-1']);
  });

  it('lists this controller on /controllers with its API addresses (authenticated)', async () => {
    expect((await call(gw, { path: '/edge/client/v1/controllers' })).status).toBe(401);
    const r = await call(gw, { path: '/edge/management/v1/controllers', headers: { 'zt-session': 'good-1' } });
    expect(r.status).toBe(200);
    expect(r.json.meta.pagination).toEqual({ limit: 10, offset: 0, totalCount: 1 });
    const [c] = r.json.data;
    expect(c).toMatchObject({
      id: 'gw-remote', name: 'gw-remote', isOnline: true, certPem: pki.issuedPem(),
      fingerprint: new X509Certificate(pki.issuedPem()).fingerprint.replace(/:/g, '').toLowerCase(),
      apiAddresses: {
        'edge-client': [{ url: `https://127.0.0.1:${gw.port}/edge/client/v1`, version: 'v1' }],
        'edge-management': [{ url: `https://127.0.0.1:${gw.port}/edge/management/v1`, version: 'v1' }],
      },
      _links: { self: { href: './controllers/gw-remote' } },
    });
  });
});
