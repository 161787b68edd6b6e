import type { IncomingMessage } from 'node:http';
import { BlockList, type Socket, isIP } from 'node:net';
import type { TLSSocket } from 'node:tls';

/** The request header trusted proxies report the client chain in. */
export type ForwardedHeader = 'x-forwarded-for' | 'forwarded';

/** How the gateway determines a request's client address. */
export interface ClientAddressOptions {
  /**
   * Addresses and CIDRs (`10.0.0.0/8`, `fd00::/8`, `192.0.2.7`) of the proxies in front of the
   * gateway. Only when the TLS peer is one of them are its forwarded headers believed. Default none:
   * the client is always the peer.
   */
  trustedProxies?: readonly string[];
  /**
   * The header those proxies add the address they saw to: `x-forwarded-for` (default; nginx,
   * HAProxy, Envoy, cloud load balancers) or `forwarded` (RFC 7239 `for=`). Only one is read: a
   * proxy passes the other through untouched, so believing both would let a client choose its address.
   */
  header?: ForwardedHeader;
}

/**
 * An address as the gateway reports it: IPv4 dotted, IPv6 lower case, an IPv4-mapped IPv6 address
 * (`::ffff:127.0.0.1`, `::ffff:7f00:1`) as its IPv4 address, brackets removed; undefined when `raw`
 * is not an IP address.
 */
export function normaliseAddress(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  let a = raw.trim();
  if (a.startsWith('[') && a.endsWith(']')) a = a.slice(1, -1);
  const kind = isIP(a);
  if (kind === 4) return a;
  if (kind !== 6) return undefined;
  a = a.toLowerCase();
  if (!a.startsWith('::ffff:')) return a;
  const tail = a.slice(7);
  if (isIP(tail) === 4) return tail;
  const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(tail);
  if (!hex) return a;
  const hi = Number.parseInt(hex[1]!, 16);
  const lo = Number.parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/**
 * A set of addresses and CIDR blocks (node's `BlockList`). IPv4 entries also match IPv4-mapped IPv6
 * addresses and the other way round. Entries are validated: a bad one throws, naming it.
 */
export class AddressSet {
  private readonly list = new BlockList();
  readonly size: number;

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const [addr, prefix, extra] = entry.trim().split('/');
      const address = normaliseAddress(addr);
      const family = address ? isIP(address) : 0;
      const max = family === 4 ? 32 : 128;
      // `::ffff:10.0.0.0/104` is the IPv4 block 10.0.0.0/8.
      const mapped = family === 4 && isIP(addr?.replace(/^\[|\]$/g, '') ?? '') === 6;
      const bits = prefix === undefined ? max : /^\d{1,3}$/.test(prefix) ? Number(prefix) - (mapped ? 96 : 0) : Number.NaN;
      if (!address || extra !== undefined || !(bits >= 0 && bits <= max)) {
        throw new Error(`"${entry}" is not an IP address or CIDR block`);
      }
      this.list.addSubnet(address, bits, family === 4 ? 'ipv4' : 'ipv6');
    }
    this.size = entries.length;
  }

  /** True when `address` (normalised or not) lies in one of the entries. */
  has(address: string): boolean {
    const a = normaliseAddress(address);
    if (!a || this.size === 0) return false;
    return this.list.check(a, isIP(a) === 4 ? 'ipv4' : 'ipv6');
  }
}

/** One hop of a forwarded chain (`1.2.3.4`, `1.2.3.4:80`, `[v6]`, `[v6]:80`, `"…"`): its address, if it is one. */
export function hopAddress(raw: string): string | undefined {
  let hop = raw.trim();
  if (hop.startsWith('"') && hop.endsWith('"') && hop.length >= 2) hop = hop.slice(1, -1).replace(/\\(.)/g, '$1');
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(hop);
  if (bracketed) return isIP(bracketed[1]!) === 6 ? normaliseAddress(bracketed[1]) : undefined;
  const v4port = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(hop);
  return normaliseAddress(v4port ? v4port[1] : hop);
}

/** Splits at `sep` outside double-quoted strings. */
function splitOutsideQuotes(value: string, sep: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '\\' && quoted) i++;
    else if (c === '"') quoted = !quoted;
    else if (c === sep && !quoted) {
      parts.push(value.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(value.slice(start));
  return parts;
}

/**
 * The hops of a forwarded header, nearest last: the `x-forwarded-for` entries, or the `for=` value
 * of each RFC 7239 `forwarded` element ('' for an element without one). Node joins repeated header
 * lines with `, `, which is the order they arrived in.
 */
export function forwardedHops(value: string | string[] | undefined, header: ForwardedHeader): string[] {
  const joined = Array.isArray(value) ? value.join(',') : value;
  if (!joined) return [];
  if (header === 'x-forwarded-for') return joined.split(',');
  return splitOutsideQuotes(joined, ',').map((element) => {
    for (const pair of splitOutsideQuotes(element, ';')) {
      const eq = pair.indexOf('=');
      if (eq > 0 && pair.slice(0, eq).trim().toLowerCase() === 'for') return pair.slice(eq + 1);
    }
    return '';
  });
}

/**
 * The client of a request whose TLS peer is `peer`: the peer itself unless it is a trusted proxy;
 * then the forwarded chain is walked from the right (nearest hop first), past every trusted hop, and
 * the first untrusted one is the client. A hop that is not an address (`unknown`, an obfuscated
 * identifier, garbage) ends the walk at the trusted hop that reported it; when every hop is trusted
 * the farthest one is the client.
 */
export function resolveClientAddress(
  peer: string | undefined,
  headers: IncomingMessage['headers'],
  trusted: AddressSet,
  header: ForwardedHeader = 'x-forwarded-for',
): string {
  let client = normaliseAddress(peer) ?? peer ?? '';
  if (!trusted.has(client)) return client;
  const hops = forwardedHops(headers[header], header);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hopAddress(hops[i]!);
    if (!hop) return client;
    client = hop;
    if (!trusted.has(hop)) return client;
  }
  return client;
}

/** Resolves client addresses with fixed options (validated once). */
export function clientAddressResolver(opts: ClientAddressOptions = {}): (req: IncomingMessage) => string {
  const trusted = new AddressSet(opts.trustedProxies ?? []);
  const header = opts.header ?? 'x-forwarded-for';
  if (trusted.size === 0) return (req) => normaliseAddress(req.socket.remoteAddress) ?? req.socket.remoteAddress ?? '';
  return (req) => resolveClientAddress(req.socket.remoteAddress, req.headers, trusted, header);
}

/** Request headers that carry a forwarding chain; a caller's are never passed on. */
function isForwardingHeader(name: string): boolean {
  return name === 'forwarded' || name === 'x-real-ip' || name.startsWith('x-forwarded-');
}

/**
 * Replaces every forwarding header in `headers` (`forwarded`, `x-real-ip`, `x-forwarded-*`) with
 * the gateway's own: `x-forwarded-for` is the one client address (`client`, else the socket's
 * peer), `-proto`/`-port` those of the gateway's listener, `-host` the request's `Host`. Contexts
 * read the client from `x-forwarded-for` and see nothing a caller wrote.
 */
export function replaceForwardedHeaders(headers: IncomingMessage['headers'], socket: Socket, client: string | undefined): void {
  for (const name in headers) if (isForwardingHeader(name)) delete headers[name];
  headers['x-forwarded-for'] = client ?? normaliseAddress(socket.remoteAddress) ?? socket.remoteAddress ?? '';
  headers['x-forwarded-port'] = String(socket.localPort ?? '');
  headers['x-forwarded-proto'] = (socket as TLSSocket).encrypted ? 'https' : 'http';
  if (headers.host !== undefined) headers['x-forwarded-host'] = headers.host;
}

/** The 8 groups of an IPv6 address (`::` and a dotted IPv4 tail expanded). */
function ipv6Groups(address: string): number[] {
  let a = address;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (v4) {
    const [b0, b1, b2, b3] = v4[1]!.split('.').map(Number) as [number, number, number, number];
    a = `${a.slice(0, v4.index)}${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const [head, tail] = a.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((g) => Number.parseInt(g, 16));
}

/**
 * The unit a per-address limit counts: an IPv4 address as it is, an IPv6 address by its /64 (one
 * subscriber or LAN usually holds a whole /64, so per-address counting would be free to dodge).
 */
export function addressLimitKey(address: string): string {
  const a = normaliseAddress(address);
  if (!a || isIP(a) === 4) return a ?? address;
  const g = ipv6Groups(a.split('%')[0]!);
  return `${g.slice(0, 4).map((n) => n.toString(16)).join(':')}::/64`;
}
