import type { IncomingMessage } from 'node:http';
import {
  AddressSet,
  addressLimitKey,
  clientAddressResolver,
  forwardedHops,
  hopAddress,
  normaliseAddress,
  replaceForwardedHeaders,
  resolveClientAddress,
} from './client-address.js';

/** A request as the listener hands it over: its socket's peer and local port, and its headers. */
function request(peer: string, headers: Record<string, string> = {}, encrypted = true): IncomingMessage {
  return { socket: { remoteAddress: peer, localPort: 1280, encrypted }, headers: { ...headers } } as unknown as IncomingMessage;
}

describe('normaliseAddress', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    [' 203.0.113.7 ', '203.0.113.7'],
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['::FFFF:7f00:1', '127.0.0.1'],
    ['[2001:DB8::1]', '2001:db8::1'],
    ['::1', '::1'],
  ])('%s → %s', (raw, expected) => {
    expect(normaliseAddress(raw)).toBe(expected);
  });

  it.each(['', 'unknown', '_hidden', '1.2.3', '999.1.1.1', 'example.com', '1.2.3.4:80'])('%j is not an address', (raw) => {
    expect(normaliseAddress(raw)).toBeUndefined();
  });
});

describe('AddressSet', () => {
  const set = new AddressSet(['10.0.0.0/8', '192.0.2.7', 'fd00::/8', '::ffff:172.16.0.0/108']);

  it('matches IPv4 blocks and single addresses, also as IPv4-mapped IPv6 peers', () => {
    expect(set.has('10.200.3.4')).toBe(true);
    expect(set.has('::ffff:10.200.3.4')).toBe(true);
    expect(set.has('192.0.2.7')).toBe(true);
    expect(set.has('::ffff:192.0.2.7')).toBe(true);
    expect(set.has('192.0.2.8')).toBe(false);
    expect(set.has('11.0.0.1')).toBe(false);
  });

  it('matches IPv6 blocks, and an IPv4 block written as IPv4-mapped IPv6', () => {
    expect(set.has('fd12:3456::1')).toBe(true);
    expect(set.has('fe80::1')).toBe(false);
    expect(set.has('172.16.9.9')).toBe(true);
    expect(set.has('172.32.0.1')).toBe(false);
  });

  it('matches nothing when empty, and nothing that is not an address', () => {
    expect(new AddressSet([]).has('127.0.0.1')).toBe(false);
    expect(set.has('unknown')).toBe(false);
  });

  it.each(['10.0.0.0/33', 'fd00::/129', 'example.com', '10.0.0.0/', '10.0.0.0/8/1', '1.2.3.4:80', '::ffff:10.0.0.0/95'])(
    'refuses %j, naming it',
    (entry) => {
      expect(() => new AddressSet([entry])).toThrow(`"${entry}"`);
    },
  );
});

describe('forwarded hops', () => {
  it('splits x-forwarded-for entries and reads their addresses, ports and brackets removed', () => {
    expect(forwardedHops('203.0.113.7, 10.0.0.2:443,[2001:db8::5]:80', 'x-forwarded-for').map(hopAddress)).toEqual([
      '203.0.113.7',
      '10.0.0.2',
      '2001:db8::5',
    ]);
  });

  it('reads the for= of each RFC 7239 element, quoted or not, in any case, with other parameters around it', () => {
    const value = 'for=192.0.2.60;proto=http;by=203.0.113.43, For="[2001:db8:cafe::17]:4711", proto=https, for=unknown, for="_hidden"';
    expect(forwardedHops(value, 'forwarded').map(hopAddress)).toEqual(['192.0.2.60', '2001:db8:cafe::17', undefined, undefined, undefined]);
  });

  it('keeps a comma inside a quoted Forwarded value inside its element', () => {
    expect(forwardedHops('for="a,b";by=x, for=10.0.0.1', 'forwarded')).toEqual(['"a,b"', '10.0.0.1']);
  });

  it('joins repeated header lines in order', () => {
    expect(forwardedHops(['1.1.1.1', '2.2.2.2'], 'x-forwarded-for')).toEqual(['1.1.1.1', '2.2.2.2']);
    expect(forwardedHops(undefined, 'forwarded')).toEqual([]);
  });
});

describe('resolveClientAddress', () => {
  const trusted = new AddressSet(['10.0.0.0/8', 'fd00::/8']);

  it('is the peer when no proxy is trusted, whatever the caller claims', () => {
    const none = new AddressSet([]);
    expect(resolveClientAddress('::ffff:198.51.100.9', { 'x-forwarded-for': '203.0.113.7' }, none)).toBe('198.51.100.9');
  });

  it('is the peer when the peer is not a trusted proxy', () => {
    expect(resolveClientAddress('198.51.100.9', { 'x-forwarded-for': '203.0.113.7' }, trusted)).toBe('198.51.100.9');
  });

  it('walks from the right past trusted hops to the first untrusted one', () => {
    const headers = { 'x-forwarded-for': '1.1.1.1, 203.0.113.7, 10.0.0.3, 10.0.0.2' };
    expect(resolveClientAddress('10.0.0.1', headers, trusted)).toBe('203.0.113.7');
  });

  it('does not let the caller pick its address by prepending entries', () => {
    // The caller sent "x-forwarded-for: 10.9.9.9" (a trusted-looking address); its proxy appended the real one.
    expect(resolveClientAddress('10.0.0.1', { 'x-forwarded-for': '10.9.9.9, 198.51.100.4' }, trusted)).toBe('198.51.100.4');
  });

  it('stops at the trusted hop that reported something that is not an address', () => {
    expect(resolveClientAddress('10.0.0.1', { 'x-forwarded-for': '203.0.113.7, garbage, 10.0.0.2' }, trusted)).toBe('10.0.0.2');
    expect(resolveClientAddress('10.0.0.1', { 'x-forwarded-for': 'unknown' }, trusted)).toBe('10.0.0.1');
  });

  it('is the farthest hop when every hop is trusted, and the peer when there is no header', () => {
    expect(resolveClientAddress('10.0.0.1', { 'x-forwarded-for': '10.0.0.3, 10.0.0.2' }, trusted)).toBe('10.0.0.3');
    expect(resolveClientAddress('::ffff:10.0.0.1', {}, trusted)).toBe('10.0.0.1');
  });

  it('reads only the configured header', () => {
    const headers = { forwarded: 'for="[2001:db8::9]:5000", for=10.0.0.2', 'x-forwarded-for': '192.0.2.1' };
    expect(resolveClientAddress('fd00::1', headers, trusted, 'forwarded')).toBe('2001:db8::9');
    expect(resolveClientAddress('fd00::1', headers, trusted, 'x-forwarded-for')).toBe('192.0.2.1');
    expect(resolveClientAddress('fd00::1', { forwarded: 'for=192.0.2.1' }, trusted, 'x-forwarded-for')).toBe('fd00::1');
  });
});

describe('clientAddressResolver', () => {
  it('validates the trusted proxies once', () => {
    expect(() => clientAddressResolver({ trustedProxies: ['nonsense'] })).toThrow('"nonsense"');
  });

  it('answers the normalised peer without trusted proxies, and the forwarded client behind one', () => {
    expect(clientAddressResolver()(request('::ffff:127.0.0.1', { 'x-forwarded-for': '203.0.113.7' }))).toBe('127.0.0.1');
    const behind = clientAddressResolver({ trustedProxies: ['127.0.0.1'] });
    expect(behind(request('::ffff:127.0.0.1', { 'x-forwarded-for': '203.0.113.7' }))).toBe('203.0.113.7');
  });
});

describe('replaceForwardedHeaders', () => {
  it('drops every forwarding header the caller sent and sets the gateway’s own', () => {
    const req = request('::ffff:127.0.0.1', {
      host: 'ctrl.example:1280',
      'x-forwarded-for': '203.0.113.7',
      'x-forwarded-host': 'evil.example',
      'x-forwarded-proto': 'http',
      'x-forwarded-prefix': '/x',
      forwarded: 'for=203.0.113.7',
      'x-real-ip': '203.0.113.7',
      'content-type': 'application/json',
    });
    replaceForwardedHeaders(req.headers, req.socket, '198.51.100.4');
    expect(req.headers).toEqual({
      host: 'ctrl.example:1280',
      'content-type': 'application/json',
      'x-forwarded-for': '198.51.100.4',
      'x-forwarded-port': '1280',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'ctrl.example:1280',
    });
  });

  it('falls back to the normalised peer when no client address was determined', () => {
    const req = request('::ffff:127.0.0.1', { 'x-forwarded-for': '203.0.113.7' }, false);
    replaceForwardedHeaders(req.headers, req.socket, undefined);
    expect(req.headers).toMatchObject({ 'x-forwarded-for': '127.0.0.1', 'x-forwarded-proto': 'http' });
  });
});

describe('addressLimitKey', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
  ])('%s counts as %s', (address, key) => {
    expect(addressLimitKey(address)).toBe(key);
  });
});
