import { ApiError } from '@ziti/errors';
import { METADATA_URLS } from '../testing/outbound-spellings.js';
import { OutboundGuard, type Resolver } from './outbound-url.js';


const fieldOf = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (err: unknown) => (err instanceof ApiError ? `${err.status} ${err.code} ${err.cause?.field}` : `thrown: ${(err as Error).message}`),
  );

describe('outbound URLs', () => {
  it.each([
    ['http://2852039166/', '169.254.169.254'],
    ['http://0xa9fea9fe/', '169.254.169.254'],
    ['http://0xa9.0xfe.0xa9.0xfe/', '169.254.169.254'],
    ['http://0251.0376.0251.0376/', '169.254.169.254'],
    ['http://169.254.43518/', '169.254.169.254'],
    ['http://169.254.169.254./', '169.254.169.254'],
    ['http://%31%36%39.254.169.254/', '169.254.169.254'],
    ['http://１６９.２５４.１６９.２５４/', '169.254.169.254'],
    ['http://0x7f.1/', '127.0.0.1'],
    ['http://[::ffff:169.254.169.254]/', '[::ffff:a9fe:a9fe]'],
    ['http://[0:0:0:0:0:ffff:a9fe:a9fe]/', '[::ffff:a9fe:a9fe]'],
  ])('WHATWG URL parsing already writes %s with the host %s', (url, host) => {
    expect(new URL(url).hostname).toBe(host);
  });

  it.each(METADATA_URLS)('refuses %s, with or without private addresses allowed', async (url) => {
    const resolve: Resolver = async () => {
      throw new Error('an address literal is never resolved');
    };
    for (const allowPrivate of [false, true]) {
      expect(await fieldOf(new OutboundGuard({ allowPrivate, resolve }).checkUrl('jwksEndpoint', url))).toBe('400 COULD_NOT_VALIDATE jwksEndpoint');
      await expect(new OutboundGuard({ allowPrivate, resolve }).pin(new URL(url))).rejects.toThrow(/refused address/);
    }
  });

  it('refuses other schemes and what is not a URL', async () => {
    const g = new OutboundGuard();
    for (const url of ['file:///etc/passwd', 'ftp://idp.example.com/jwks', 'gopher://127.0.0.1:6379/_INFO', 'not a url', '//idp.example.com/jwks']) {
      expect([url, await fieldOf(g.checkUrl('jwksEndpoint', url))]).toEqual([url, '400 COULD_NOT_VALIDATE jwksEndpoint']);
    }
  });

  it('checks every address a name resolves to', async () => {
    const zone: Record<string, string[]> = {
      'idp.example.com': ['2606:4700::1111', '8.8.8.8'],
      'metadata.example': ['169.254.169.254'],
      'mapped.example': ['::ffff:169.254.169.254'],
      'mixed.example': ['8.8.8.8', '10.0.0.7'],
      'lab.example': ['192.168.1.20'],
    };
    const resolve: Resolver = async (host) => {
      const addresses = zone[host];
      if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
    const strict = new OutboundGuard({ resolve });
    const lab = new OutboundGuard({ resolve, allowPrivate: true });
    const check = (g: OutboundGuard, host: string) => fieldOf(g.checkUrl('jwksEndpoint', `https://${host}/jwks`));
    expect(await check(strict, 'idp.example.com')).toBe('ok');
    expect(await check(strict, 'metadata.example')).toBe('400 COULD_NOT_VALIDATE jwksEndpoint');
    expect(await check(lab, 'metadata.example')).toBe('400 COULD_NOT_VALIDATE jwksEndpoint');
    expect(await check(lab, 'mapped.example')).toBe('400 COULD_NOT_VALIDATE jwksEndpoint');
    expect(await check(strict, 'mixed.example')).toBe('400 COULD_NOT_VALIDATE jwksEndpoint');
    expect(await check(lab, 'mixed.example')).toBe('ok');
    expect(await check(strict, 'lab.example')).toBe('400 COULD_NOT_VALIDATE jwksEndpoint');
    expect(await check(lab, 'lab.example')).toBe('ok');
    // not resolvable now: nothing to check; every fetch resolves and checks again
    expect(await check(strict, 'idp.not-yet.example')).toBe('ok');
    await expect(strict.pin(new URL('https://idp.not-yet.example/jwks'))).rejects.toThrow(/ENOTFOUND/);

    expect(await strict.pin(new URL('https://idp.example.com/jwks'))).toEqual({ address: '2606:4700::1111', family: 6 });
    expect(await strict.pin(new URL('http://[2606:4700::1111]:8080/jwks'))).toEqual({ address: '2606:4700::1111', family: 6 });
    expect(await strict.pin(new URL('http://8.8.8.8/jwks'))).toEqual({ address: '8.8.8.8', family: 4 });
    await expect(strict.pin(new URL('https://mixed.example/jwks'))).rejects.toThrow(/10\.0\.0\.7 is private network/);
    expect(await lab.pin(new URL('https://mixed.example/jwks'))).toEqual({ address: '8.8.8.8', family: 4 });
  });

  it('lets a name through when resolution does not answer in time', async () => {
    const g = new OutboundGuard({ resolve: () => new Promise(() => undefined), lookupTimeoutMs: 20 });
    expect(await fieldOf(g.checkUrl('jwksEndpoint', 'https://slow.example/jwks'))).toBe('ok');
  });

  it('resolves localhost with the system resolver: a loopback address, refused unless private addresses are allowed', async () => {
    expect(await fieldOf(new OutboundGuard().checkUrl('jwksEndpoint', 'http://localhost:8080/jwks'))).toBe('400 COULD_NOT_VALIDATE jwksEndpoint');
    expect(await fieldOf(new OutboundGuard({ allowPrivate: true }).checkUrl('jwksEndpoint', 'http://localhost:8080/jwks'))).toBe('ok');
  });

  it('says why, and names the setting when one would allow it', async () => {
    const err = await new OutboundGuard().checkUrl('jwksEndpoint', 'http://127.0.0.1/jwks').catch((e: ApiError) => e);
    expect((err as ApiError).cause).toMatchObject({ field: 'jwksEndpoint', value: 'http://127.0.0.1/jwks' });
    expect((err as ApiError).cause?.reason).toMatch(/loopback.*ZITI_OUTBOUND_ALLOW_PRIVATE/);
    const meta = await new OutboundGuard({ allowPrivate: true }).checkUrl('jwksEndpoint', 'http://[::ffff:169.254.169.254]/').catch((e: ApiError) => e);
    expect((meta as ApiError).cause?.reason).toContain('IPv4-mapped 169.254.169.254: cloud metadata service');
  });
});
