/**
 * What kind of address an IP address is, for requests the controller makes itself (JWKS of
 * external JWT signers). Every spelling is normalised first: IPv4 in decimal, hex, octal and short
 * forms (`2852039166`, `0xa9.0xfe.0xa9.0xfe`, `0251.0376.0251.0376`, `169.254.43518`), IPv6 in any
 * compression or case, with a zone (`%eth0`) or brackets, and IPv6 forms that carry an IPv4
 * address, whose IPv4 address is classified too: IPv4-mapped (`::ffff:0:0/96`), IPv4-compatible
 * (`::/96`), IPv4-translated (`::ffff:0:0:0/96`), NAT64 (`64:ff9b::/96`, `64:ff9b:1::/48`), 6to4
 * (`2002::/16`) and Teredo (`2001::/32`, server and obfuscated client address).
 */

/** `public` may always be reached; `private` and `loopback` only when allowed; the rest never. */
export type AddressKind = 'public' | 'private' | 'loopback' | 'link-local' | 'metadata' | 'unspecified' | 'multicast' | 'broadcast' | 'reserved';

export interface AddressClass {
  /** The address normalised: dotted quad for IPv4, RFC 5952 text for IPv6. */
  address: string;
  kind: AddressKind;
  /** What decided the kind, e.g. `IPv4-mapped 169.254.169.254: cloud metadata service`. */
  reason: string;
}

type Range = readonly [prefix: string, bits: number, kind: AddressKind, label: string];

// First match wins: the more specific entries come first.
const V4_RANGES: readonly Range[] = [
  ['0.0.0.0', 8, 'unspecified', '"this network" (0.0.0.0/8)'],
  ['10.0.0.0', 8, 'private', 'private network (10.0.0.0/8)'],
  ['100.100.100.200', 32, 'metadata', 'cloud metadata service (Alibaba Cloud)'],
  ['100.64.0.0', 10, 'private', 'shared address space, carrier-grade NAT (100.64.0.0/10)'],
  ['127.0.0.0', 8, 'loopback', 'loopback (127.0.0.0/8)'],
  ['169.254.169.254', 32, 'metadata', 'cloud metadata service (AWS, Azure, GCP, OpenStack, …)'],
  ['169.254.0.0', 16, 'link-local', 'link-local (169.254.0.0/16)'],
  ['172.16.0.0', 12, 'private', 'private network (172.16.0.0/12)'],
  ['192.0.0.192', 32, 'metadata', 'cloud metadata service (Oracle Cloud)'],
  ['192.0.0.0', 24, 'reserved', 'IETF protocol assignments (192.0.0.0/24)'],
  ['192.0.2.0', 24, 'reserved', 'documentation (192.0.2.0/24)'],
  ['192.88.99.0', 24, 'reserved', 'deprecated 6to4 relay anycast (192.88.99.0/24)'],
  ['192.168.0.0', 16, 'private', 'private network (192.168.0.0/16)'],
  ['198.18.0.0', 15, 'reserved', 'benchmarking (198.18.0.0/15)'],
  ['198.51.100.0', 24, 'reserved', 'documentation (198.51.100.0/24)'],
  ['203.0.113.0', 24, 'reserved', 'documentation (203.0.113.0/24)'],
  ['224.0.0.0', 4, 'multicast', 'multicast (224.0.0.0/4)'],
  ['255.255.255.255', 32, 'broadcast', 'limited broadcast'],
  ['240.0.0.0', 4, 'reserved', 'reserved (240.0.0.0/4)'],
];

/** IPv6 ranges that carry an IPv4 address; `v4` takes it (or them, for Teredo) out of the 128 bits. */
type Embedding = readonly [prefix: string, bits: number, container: AddressKind, label: string, v4: (a: bigint) => bigint[]];
const low32 = (a: bigint) => [a & 0xffffffffn];
const EMBEDDINGS: readonly Embedding[] = [
  ['::ffff:0:0', 96, 'public', 'IPv4-mapped', low32],
  ['::ffff:0:0:0', 96, 'reserved', 'IPv4-translated', low32],
  ['64:ff9b::', 96, 'public', 'NAT64', low32],
  ['64:ff9b:1::', 48, 'private', 'local-use NAT64', low32],
  ['2002::', 16, 'public', '6to4', (a) => [(a >> 80n) & 0xffffffffn]],
  // Teredo: the server's address, and the client's, stored inverted.
  ['2001::', 32, 'public', 'Teredo', (a) => [(a >> 64n) & 0xffffffffn, ~a & 0xffffffffn]],
  ['::', 96, 'reserved', 'IPv4-compatible', low32], // after ::ffff:0:0/96; :: and ::1 are matched before
];

const V6_RANGES: readonly Range[] = [
  ['::', 128, 'unspecified', 'unspecified (::)'],
  ['::1', 128, 'loopback', 'loopback (::1)'],
  ['100::', 64, 'reserved', 'discard-only (100::/64)'],
  ['2001:db8::', 32, 'reserved', 'documentation (2001:db8::/32)'],
  ['2001:2::', 48, 'reserved', 'benchmarking (2001:2::/48)'],
  ['2001:10::', 28, 'reserved', 'deprecated ORCHID (2001:10::/28)'],
  ['3fff::', 20, 'reserved', 'documentation (3fff::/20)'],
  ['fd00:ec2::254', 128, 'metadata', 'cloud metadata service (AWS)'],
  ['fd20:ce::254', 128, 'metadata', 'cloud metadata service (Google Cloud)'],
  ['fc00::', 7, 'private', 'unique local (fc00::/7)'],
  ['fe80::', 10, 'link-local', 'link-local (fe80::/10)'],
  ['fec0::', 10, 'reserved', 'deprecated site-local (fec0::/10)'],
  ['ff00::', 8, 'multicast', 'multicast (ff00::/8)'],
  ['2000::', 3, 'public', 'global unicast'],
];

/**
 * An IPv4 address in any spelling `inet_aton` and WHATWG URLs accept: 1 to 4 parts, each decimal,
 * octal (leading 0) or hex (0x), the last filling the remaining bytes, one trailing dot allowed.
 * Null when it is not one.
 */
export function parseIPv4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length === 0 || parts.length > 4) return null;
  const values: number[] = [];
  for (const p of parts) {
    let v: number;
    if (/^0x[0-9a-f]*$/i.test(p)) v = p.length === 2 ? 0 : Number.parseInt(p.slice(2), 16);
    else if (/^0[0-7]+$/.test(p)) v = Number.parseInt(p, 8);
    else if (/^(0|[1-9][0-9]*)$/.test(p)) v = Number(p);
    else return null;
    if (!Number.isSafeInteger(v)) return null;
    values.push(v);
  }
  const last = values.pop()!;
  if (values.some((v) => v > 255) || last >= 256 ** (4 - values.length)) return null;
  return values.reduce((acc, v, i) => acc + v * 256 ** (3 - i), 0) + last;
}

/** An IPv6 address (brackets and a `%zone` allowed, a dotted IPv4 tail too) as 128 bits; null when it is not one. */
export function parseIPv6(text: string): bigint | null {
  let s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  s = s.replace(/%[^%]*$/, '');
  if (!s.includes(':') || /[^0-9a-fA-F:.]/.test(s)) return null;
  let groups: number[] = [];
  const tail = /:(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (tail) {
    if (!/^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(tail[1]!)) return null;
    const v4 = parseIPv4(tail[1]!)!;
    s = `${s.slice(0, tail.index + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const parse = (h: string) => (h === '' ? [] : h.split(':').map((g) => (/^[0-9a-fA-F]{1,4}$/.test(g) ? Number.parseInt(g, 16) : Number.NaN)));
  const head = parse(halves[0]!);
  const rest = halves.length === 2 ? parse(halves[1]!) : [];
  if ([...head, ...rest].some(Number.isNaN)) return null;
  if (halves.length === 2) {
    if (head.length + rest.length > 7) return null;
    groups = [...head, ...Array<number>(8 - head.length - rest.length).fill(0), ...rest];
  } else {
    if (head.length !== 8) return null;
    groups = head;
  }
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

export function formatIPv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** RFC 5952: lower case, leading zeros dropped, the longest run (2 or more) of zero groups as `::`. */
export function formatIPv6(a: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((a >> BigInt(112 - 16 * i)) & 0xffffn));
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

const v4Prefix = (p: string) => parseIPv4(p)!;
const V4_TABLE = V4_RANGES.map(([p, bits, kind, label]) => ({ base: v4Prefix(p), bits, kind, label }));
const V6_TABLE = V6_RANGES.map(([p, bits, kind, label]) => ({ base: parseIPv6(p)!, bits, kind, label }));
const EMBED_TABLE = EMBEDDINGS.map(([p, bits, container, label, v4]) => ({ base: parseIPv6(p)!, bits, container, label, v4 }));

const inV4 = (n: number, base: number, bits: number) => bits === 0 || n >>> (32 - bits) === base >>> (32 - bits);
const inV6 = (a: bigint, base: bigint, bits: number) => a >> BigInt(128 - bits) === base >> BigInt(128 - bits);

function classifyV4(n: number): AddressClass {
  const hit = V4_TABLE.find((r) => inV4(n, r.base, r.bits));
  return { address: formatIPv4(n), kind: hit?.kind ?? 'public', reason: hit?.label ?? 'public' };
}

/** 0 may always be reached, 1 only with private addresses allowed, 2 never. */
export function severity(kind: AddressKind): number {
  if (kind === 'public') return 0;
  return kind === 'private' || kind === 'loopback' ? 1 : 2;
}

function classifyV6(a: bigint): AddressClass {
  const address = formatIPv6(a);
  const exact = V6_TABLE.find((r) => r.bits === 128 && r.base === a);
  if (exact) return { address, kind: exact.kind, reason: exact.label };
  const embed = EMBED_TABLE.find((e) => inV6(a, e.base, e.bits));
  if (embed) {
    // The embedded address decides unless the form itself is worse (reserved, or private).
    let worst: AddressClass = { address, kind: embed.container, reason: embed.label };
    for (const v4 of embed.v4(a)) {
      const inner = classifyV4(Number(v4));
      if (severity(inner.kind) >= severity(worst.kind)) worst = { address, kind: inner.kind, reason: `${embed.label} ${inner.address}: ${inner.reason}` };
    }
    return worst;
  }
  const hit = V6_TABLE.find((r) => inV6(a, r.base, r.bits));
  return { address, kind: hit?.kind ?? 'reserved', reason: hit?.label ?? 'not global unicast (outside 2000::/3)' };
}

/** The kind of an IP address in any spelling above; null when the text is not an IP address. */
export function classifyAddress(text: string): AddressClass | null {
  const v4 = parseIPv4(text);
  if (v4 !== null) return classifyV4(v4);
  const v6 = parseIPv6(text);
  return v6 === null ? null : classifyV6(v6);
}

/** One text per address: dotted quad for IPv4 and IPv4-mapped IPv6, RFC 5952 for other IPv6; null when not an address. */
export function canonicalAddress(text: string): string | null {
  const v4 = parseIPv4(text);
  if (v4 !== null) return formatIPv4(v4);
  const v6 = parseIPv6(text);
  if (v6 === null) return null;
  return v6 >> 32n === 0xffffn ? formatIPv4(Number(v6 & 0xffffffffn)) : formatIPv6(v6);
}

/** Whether requests may go to this address: public ones, and private or loopback ones when `allowPrivate`. Not an address: false. */
export function isAllowedAddress(text: string, opts: { allowPrivate: boolean }): boolean {
  const c = classifyAddress(text);
  if (!c) return false;
  const s = severity(c.kind);
  return s === 0 || (s === 1 && opts.allowPrivate);
}
