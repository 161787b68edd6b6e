import { type AddressKind, canonicalAddress, classifyAddress, formatIPv6, isAllowedAddress, parseIPv4, parseIPv6 } from './outbound-address.js';

const allowed = (ip: string, allowPrivate: boolean) => isAllowedAddress(ip, { allowPrivate });

describe('outbound address classification', () => {
  // Refused whatever the setting: [spelling, kind, what the reason must name]
  const never: [string, AddressKind, string][] = [
    // the metadata address in every IPv4 spelling
    ['169.254.169.254', 'metadata', 'metadata'],
    ['2852039166', 'metadata', 'metadata'],
    ['0xa9fea9fe', 'metadata', 'metadata'],
    ['0xa9.0xfe.0xa9.0xfe', 'metadata', 'metadata'],
    ['0XA9.0XFE.0XA9.0XFE', 'metadata', 'metadata'],
    ['0251.0376.0251.0376', 'metadata', 'metadata'],
    ['0251.254.0xa9.0376', 'metadata', 'metadata'],
    ['169.254.43518', 'metadata', 'metadata'],
    ['169.16689662', 'metadata', 'metadata'],
    ['169.254.169.254.', 'metadata', 'metadata'],
    // ... and in every IPv6 form that carries it
    ['::ffff:169.254.169.254', 'metadata', 'IPv4-mapped 169.254.169.254'],
    ['::ffff:a9fe:a9fe', 'metadata', 'IPv4-mapped 169.254.169.254'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'metadata', 'IPv4-mapped 169.254.169.254'],
    ['0000:0000:0000:0000:0000:FFFF:A9FE:A9FE', 'metadata', 'IPv4-mapped 169.254.169.254'],
    ['[::ffff:169.254.169.254]', 'metadata', 'IPv4-mapped 169.254.169.254'],
    ['::ffff:169.254.169.254%eth0', 'metadata', 'IPv4-mapped 169.254.169.254'],
    ['::169.254.169.254', 'metadata', 'IPv4-compatible 169.254.169.254'],
    ['::a9fe:a9fe', 'metadata', 'IPv4-compatible 169.254.169.254'],
    ['::ffff:0:169.254.169.254', 'metadata', 'IPv4-translated 169.254.169.254'],
    ['::ffff:0:a9fe:a9fe', 'metadata', 'IPv4-translated 169.254.169.254'],
    ['64:ff9b::169.254.169.254', 'metadata', 'NAT64 169.254.169.254'],
    ['64:ff9b::a9fe:a9fe', 'metadata', 'NAT64 169.254.169.254'],
    ['64:ff9b:1::a9fe:a9fe', 'metadata', 'local-use NAT64 169.254.169.254'],
    ['2002:a9fe:a9fe::', 'metadata', '6to4 169.254.169.254'],
    ['2002:a9fe:a9fe:1234::1', 'metadata', '6to4 169.254.169.254'],
    ['2001:0:4136:e378:8000:63bf:5601:5601', 'metadata', 'Teredo 169.254.169.254'], // client, stored inverted
    ['2001:0:a9fe:a9fe:8000:63bf:f7f7:f7f7', 'metadata', 'Teredo 169.254.169.254'], // server
    // other cloud metadata services
    ['100.100.100.200', 'metadata', 'Alibaba'],
    ['::ffff:100.100.100.200', 'metadata', 'Alibaba'],
    ['192.0.0.192', 'metadata', 'Oracle'],
    ['fd00:ec2::254', 'metadata', 'AWS'],
    ['fd00:0ec2:0000:0000:0000:0000:0000:0254', 'metadata', 'AWS'],
    ['fd20:ce::254', 'metadata', 'Google'],
    // link-local, unspecified, multicast, broadcast
    ['169.254.0.1', 'link-local', '169.254.0.0/16'],
    ['fe80::1', 'link-local', 'fe80::/10'],
    ['FE80::a9fe:a9fe%eth0', 'link-local', 'fe80::/10'],
    ['febf:ffff::1', 'link-local', 'fe80::/10'],
    ['0.0.0.0', 'unspecified', '0.0.0.0/8'],
    ['0', 'unspecified', '0.0.0.0/8'],
    ['0.1.2.3', 'unspecified', '0.0.0.0/8'],
    ['::', 'unspecified', '::'],
    ['0:0:0:0:0:0:0:0', 'unspecified', '::'],
    ['::ffff:0.0.0.0', 'unspecified', 'IPv4-mapped 0.0.0.0'],
    ['::2', 'unspecified', 'IPv4-compatible 0.0.0.2'],
    ['2002::', 'unspecified', '6to4 0.0.0.0'],
    ['224.0.0.1', 'multicast', '224.0.0.0/4'],
    ['239.255.255.250', 'multicast', '224.0.0.0/4'],
    ['ff02::1', 'multicast', 'ff00::/8'],
    ['::ffff:224.0.0.251', 'multicast', 'IPv4-mapped 224.0.0.251'],
    ['255.255.255.255', 'broadcast', 'broadcast'],
    ['0xffffffff', 'broadcast', 'broadcast'],
    // reserved and special-purpose
    ['240.0.0.1', 'reserved', '240.0.0.0/4'],
    ['254.1.2.3', 'reserved', '240.0.0.0/4'],
    ['192.0.0.8', 'reserved', '192.0.0.0/24'],
    ['192.0.2.1', 'reserved', 'documentation'],
    ['198.51.100.7', 'reserved', 'documentation'],
    ['203.0.113.9', 'reserved', 'documentation'],
    ['198.18.0.1', 'reserved', 'benchmarking'],
    ['198.19.255.255', 'reserved', 'benchmarking'],
    ['192.88.99.1', 'reserved', '6to4 relay'],
    ['100::1', 'reserved', 'discard-only'],
    ['2001:db8::1', 'reserved', 'documentation'],
    ['3fff::1', 'reserved', 'documentation'],
    ['2001:2::1', 'reserved', 'benchmarking'],
    ['2001:10::1', 'reserved', 'ORCHID'],
    ['fec0::1', 'reserved', 'site-local'],
    ['4000::1', 'reserved', 'outside 2000::/3'],
    ['::8.8.8.8', 'reserved', 'IPv4-compatible'], // a deprecated form: refused even with a public address in it
    ['::ffff:0:8.8.8.8', 'reserved', 'IPv4-translated'],
  ];

  it.each(never)('refuses %s (%s) with or without private addresses allowed', (ip, kind, reason) => {
    const c = classifyAddress(ip);
    expect(c?.kind).toBe(kind);
    expect(c?.reason).toContain(reason);
    expect([allowed(ip, false), allowed(ip, true)]).toEqual([false, false]);
  });

  const privateOnes: [string, AddressKind][] = [
    ['127.0.0.1', 'loopback'],
    ['127.1', 'loopback'],
    ['0x7f000001', 'loopback'],
    ['017700000001', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['64:ff9b::a00:1', 'private'],
    ['64:ff9b:1::8.8.8.8', 'private'], // local-use NAT64: private itself
    ['2002:c0a8:101::1', 'private'], // 6to4 of 192.168.1.1
  ];

  it.each(privateOnes)('allows %s (%s) only when private addresses are allowed', (ip, kind) => {
    expect(classifyAddress(ip)?.kind).toBe(kind);
    expect([allowed(ip, false), allowed(ip, true)]).toEqual([false, true]);
  });

  const publicOnes = [
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '169.253.255.255',
    '192.0.1.1',
    '223.255.255.255',
    '2606:4700::1111',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
    '2001:0:4136:e378:8000:63bf:f7f7:f7f7', // Teredo, server 65.54.227.120 and client 8.8.8.8
  ];

  it.each(publicOnes)('allows the public address %s', (ip) => {
    expect(classifyAddress(ip)?.kind).toBe('public');
    expect([allowed(ip, false), allowed(ip, true)]).toEqual([true, true]);
  });

  it.each(['localhost', 'example.com', '1.2.3.4.5', '256.1.1.1', '1.2.3.256', '4294967296', '08.1.1.1', '0x1g', '1::2::3', '12345::', 'gggg::1', '1.2.3.4:80', '::1.2.3', '::256.1.1.1', '', '.'])(
    '%j is not an address (and is never allowed)',
    (text) => {
      expect(classifyAddress(text)).toBeNull();
      expect(allowed(text, true)).toBe(false);
    },
  );

  it('normalises what it classifies', () => {
    expect(classifyAddress('0251.0376.0251.0376')?.address).toBe('169.254.169.254');
    expect(classifyAddress('0:0:0:0:0:FFFF:A9FE:A9FE')?.address).toBe('::ffff:a9fe:a9fe');
    expect(parseIPv4('1.2.3.4')).toBe(0x01020304);
    expect(parseIPv4('1.2.772')).toBe(0x01020304);
    expect(parseIPv6('1:2:3:4:5:6:7::')).toBe(parseIPv6('1:2:3:4:5:6:7:0'));
    expect(formatIPv6(parseIPv6('2001:0db8:0000:0000:0001:0000:0000:0001')!)).toBe('2001:db8::1:0:0:1');
    expect(formatIPv6(parseIPv6('1:0:2:0:3:0:4:0')!)).toBe('1:0:2:0:3:0:4:0');
    expect(canonicalAddress('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(canonicalAddress('::FFFF:7F00:1')).toBe('127.0.0.1');
    expect(canonicalAddress('0:0::1')).toBe('::1');
    expect(canonicalAddress('nope')).toBeNull();
  });
});
