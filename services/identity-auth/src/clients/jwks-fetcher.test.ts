import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { JwksFetcher, parseJwks } from './jwks-fetcher.js';
import { METADATA_URLS } from '../testing/outbound-spellings.js';
import { OutboundGuard, type Resolver } from './outbound-url.js';

describe('JWKS fetcher', () => {
  let server: http.Server;
  let base: string;
  let hits = 0;
  let lastHost = '';
  // The test server is on loopback: private addresses must be allowed explicitly.
  const lab = new OutboundGuard({ allowPrivate: true });
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'k1' };

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits++;
      lastHost = req.headers.host ?? '';
      if (req.url === '/jwks') return void res.end(JSON.stringify({ keys: [jwk, { ...jwk, kid: 'enc', use: 'enc' }, { kid: 'bad', kty: 'nope' }] }));
      if (req.url === '/big') return void res.end(JSON.stringify({ keys: [], pad: 'x'.repeat(4096) }));
      if (req.url === '/redirect') {
        res.statusCode = 302;
        res.setHeader('location', 'http://169.254.169.254/');
        return void res.end();
      }
      if (req.url === '/slow') return; // never answers
      res.statusCode = 404;
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://localhost:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('parses signing keys by kid and skips encryption and unusable keys', () => {
    expect([...parseJwks({ keys: [jwk, { ...jwk, kid: 'enc', use: 'enc' }, { kid: 'bad', kty: 'nope' }] }).keys()]).toEqual(['k1']);
    expect(parseJwks('nope').size).toBe(0);
  });

  it('fetches and caches keys; an unknown kid refetches at most once per interval', async () => {
    const f = new JwksFetcher({ minRefreshMs: 60_000, guard: lab });
    const before = hits;
    expect((await f.key(`${base}/jwks`, 'k1'))?.asymmetricKeyType).toBe('ec');
    expect(await f.key(`${base}/jwks`, 'k1')).not.toBeNull();
    expect(await f.key(`${base}/jwks`, 'unknown')).toBeNull();
    expect(hits - before).toBe(1);
  });

  it('refuses blocked addresses, other schemes, redirects, large documents and slow servers', async () => {
    const f = new JwksFetcher({ maxBytes: 1024, timeoutMs: 300, guard: lab });
    await expect(f.fetchJson('http://169.254.169.254/latest/meta-data/')).rejects.toThrow();
    await expect(f.fetchJson('http://[fe80::1]/jwks')).rejects.toThrow();
    await expect(f.fetchJson('file:///etc/passwd')).rejects.toThrow();
    await expect(f.fetchJson(`${base}/redirect`)).rejects.toThrow(/status 302/);
    await expect(f.fetchJson(`${base}/big`)).rejects.toThrow(/larger than 1024/);
    await expect(f.fetchJson(`${base}/slow`)).rejects.toThrow(/timed out/);
    await expect(f.fetchJson(`${base}/jwks`)).resolves.toMatchObject({ keys: expect.any(Array) });
  });

  it('refuses loopback unless private addresses are allowed', async () => {
    await expect(new JwksFetcher().fetchJson(`${base}/jwks`)).rejects.toThrow(/loopback/);
    await expect(new JwksFetcher({ guard: new OutboundGuard() }).fetchJson(`${base}/jwks`.replace('localhost', '127.0.0.1'))).rejects.toThrow(/loopback/);
    await expect(new JwksFetcher({ guard: lab }).fetchJson(`${base}/jwks`)).resolves.toMatchObject({ keys: expect.any(Array) });
  });

  it('connects to the address it checked, whatever the name resolves to next', async () => {
    const port = (server.address() as AddressInfo).port;
    let lookups = 0;
    // First answer: the test server on loopback; any later one: the metadata address.
    const resolve: Resolver = async () => [{ address: lookups++ === 0 ? '127.0.0.1' : '169.254.169.254', family: 4 }];
    const f = new JwksFetcher({ guard: new OutboundGuard({ allowPrivate: true, resolve }) });
    await expect(f.fetchJson(`http://idp.test:${port}/jwks`)).resolves.toMatchObject({ keys: expect.any(Array) });
    expect(lastHost).toBe(`idp.test:${port}`);
    expect(lookups).toBe(1);
    await expect(f.fetchJson(`http://idp.test:${port}/jwks`)).rejects.toThrow(/169\.254\.169\.254 is cloud metadata/);
  });

  it('refuses every spelling of the metadata address before connecting', async () => {
    const f = new JwksFetcher({ guard: lab, timeoutMs: 300 });
    for (const url of METADATA_URLS) await expect(f.fetchJson(url)).rejects.toThrow(/refused address/);
  });
});
