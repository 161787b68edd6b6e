import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, connect } from 'node:tls';
import { PKI_FILES, certificateSans, loadOrCreatePki } from './store.js';

describe('controller PKI', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gw-pki-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('generates an EC P-256 root CA and a server certificate that chains to it', () => {
    const pki = loadOrCreatePki({ dir, sans: ['ctrl.example.test', '10.1.2.3'] });
    const ca = new X509Certificate(pki.caCertPem);
    const server = new X509Certificate(pki.serverCertPem);

    expect(ca.ca).toBe(true);
    expect(ca.verify(ca.publicKey)).toBe(true);
    expect(ca.publicKey.asymmetricKeyType).toBe('ec');
    expect(ca.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(Date.parse(ca.validTo) - Date.now()).toBeGreaterThan(9 * 365 * 24 * 3600 * 1000);

    expect(server.ca).toBe(false);
    expect(server.checkIssued(ca)).toBe(true);
    expect(server.verify(ca.publicKey)).toBe(true);
    expect(server.checkPrivateKey(createPrivateKey(pki.serverKeyPem))).toBe(true);
    expect([...certificateSans(server)].sort()).toEqual(['10.1.2.3', '127.0.0.1', '::1', 'ctrl.example.test', 'localhost'].sort());
    expect(server.checkHost('ctrl.example.test')).toBe('ctrl.example.test');
    expect(server.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(server.keyUsage).toEqual(expect.arrayContaining(['1.3.6.1.5.5.7.3.1']));
  });

  it('writes keys with mode 0600 and reuses everything on the next start', () => {
    const first = loadOrCreatePki({ dir, sans: ['ctrl.example.test'] });
    for (const f of [PKI_FILES.caKey, PKI_FILES.serverKey]) {
      expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);
    }
    const second = loadOrCreatePki({ dir, sans: ['ctrl.example.test'] });
    expect(second).toEqual(first);
  });

  it('reissues the server certificate (same CA) when a new name is required', () => {
    const first = loadOrCreatePki({ dir, sans: [] });
    const second = loadOrCreatePki({ dir, sans: ['other.example.test'] });
    expect(second.caCertPem).toBe(first.caCertPem);
    expect(second.serverCertPem).not.toBe(first.serverCertPem);
    expect(new X509Certificate(second.serverCertPem).checkHost('other.example.test')).toBe('other.example.test');
    expect(readFileSync(join(dir, PKI_FILES.serverCert), 'utf8')).toBe(second.serverCertPem);
  });

  it('reissues a server certificate that does not chain to the CA', () => {
    const first = loadOrCreatePki({ dir });
    const foreign = mkdtempSync(join(tmpdir(), 'gw-pki-foreign-'));
    try {
      const other = loadOrCreatePki({ dir: foreign });
      writeFileSync(join(dir, PKI_FILES.serverCert), other.serverCertPem);
      writeFileSync(join(dir, PKI_FILES.serverKey), other.serverKeyPem);
      const again = loadOrCreatePki({ dir });
      expect(again.caCertPem).toBe(first.caCertPem);
      expect(new X509Certificate(again.serverCertPem).checkIssued(new X509Certificate(first.caCertPem))).toBe(true);
    } finally {
      rmSync(foreign, { recursive: true, force: true });
    }
  });

  it('serves TLS that a client trusting only the CA accepts', async () => {
    const pki = loadOrCreatePki({ dir });
    const server = createServer({ key: pki.serverKeyPem, cert: pki.serverCertPem }, (s) => s.end('hi'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      const text = await new Promise<string>((resolve, reject) => {
        const sock = connect({ host: '127.0.0.1', port, ca: pki.caCertPem, servername: 'localhost' }, () => undefined);
        let data = '';
        sock.on('data', (d) => (data += d));
        sock.on('end', () => resolve(data));
        sock.on('error', reject);
      });
      expect(text).toBe('hi');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
