import { lookup as dnsLookup } from 'node:dns/promises';
import { ApiError } from '@ziti/errors';
import { type AddressClass, classifyAddress, parseIPv4, severity } from './outbound-address.js';
import { httpUrl } from '../domain/ext-jwt/signer-rules.js';

/** One address a name resolves to. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses (the system's resolver: `dns.lookup`, like connections). */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export interface OutboundGuardOptions {
  /** Loopback and private networks may be reached (`ZITI_OUTBOUND_ALLOW_PRIVATE`). Default false. */
  allowPrivate?: boolean;
  /** Default: `dns.lookup` with all addresses, in the resolver's order. */
  resolve?: Resolver;
  /** How long a signer write waits for name resolution (default 3 s); then the URL passes unchecked. */
  lookupTimeoutMs?: number;
}

const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

/** The host of a URL without the brackets of an IPv6 literal. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/**
 * The one check of every address the controller sends requests to on its own (JWKS of external
 * JWT signers): see `outbound-address.ts` for the kinds. Public addresses pass; loopback and
 * private ones only with `allowPrivate`; link-local, metadata, unspecified, multicast, broadcast
 * and reserved ones never.
 * - {@link checkUrl} when a URL is stored (signer create, update, patch): the literal address, or
 *   every address the name resolves to now; a 400 field error when one is refused. A name that does
 *   not resolve (yet) passes: nothing can be fetched from it, and every fetch checks again.
 * - {@link pin} when fetching: every address the name resolves to must pass, and the connection
 *   must go to the one returned (the caller pins it, so a second resolution cannot swap it).
 */
export class OutboundGuard {
  readonly allowPrivate: boolean;
  private readonly resolve: Resolver;
  private readonly lookupTimeoutMs: number;

  constructor(opts: OutboundGuardOptions = {}) {
    this.allowPrivate = opts.allowPrivate === true;
    this.resolve = opts.resolve ?? systemResolver;
    this.lookupTimeoutMs = opts.lookupTimeoutMs ?? 3000;
  }

  /** Why a connection to `address` is refused (`<address> is <what it is>`); null when it is allowed. */
  refusal(address: string): string | null {
    const why = this.why(address);
    return why && `${why.address} is ${why.reason}`;
  }

  private why(address: string): { address: string; reason: string } | null {
    const c: AddressClass | null = classifyAddress(address);
    if (!c) return { address, reason: 'not an IP address' };
    const s = severity(c.kind);
    if (s === 0 || (s === 1 && this.allowPrivate)) return null;
    return { address: c.address, reason: s === 1 ? `${c.reason}, allowed only with ZITI_OUTBOUND_ALLOW_PRIVATE` : c.reason };
  }

  allows(address: string): boolean {
    return this.refusal(address) === null;
  }

  /** A URL to store for later fetches: http(s), and no refused address; else 400 COULD_NOT_VALIDATE on `field`. */
  async checkUrl(field: string, raw: string): Promise<URL> {
    const url = parseFetchableUrl(field, raw);
    const host = hostOf(url);
    const literal = classifyAddress(host) !== null;
    let addresses = [host];
    if (!literal) {
      const resolved = await this.resolveWithin(host);
      if (!resolved) return url;
      addresses = resolved.map((a) => a.address);
    }
    for (const address of addresses) {
      const why = this.why(address);
      if (!why) continue;
      const what = literal ? why.reason : `it resolves to ${why.address}, ${why.reason}`;
      throw ApiError.field(field, `${field} must not point at ${url.hostname}: ${what}`, raw);
    }
    return url;
  }

  /** The address to connect to for `url`, after checking every address of its host; throws when one is refused. */
  async pin(url: URL): Promise<ResolvedAddress> {
    const host = hostOf(url);
    const addresses = classifyAddress(host) ? [{ address: host, family: parseIPv4(host) === null ? 6 : 4 }] : await this.resolve(host);
    if (addresses.length === 0) throw new Error(`${host} does not resolve`);
    for (const a of addresses) {
      const why = this.refusal(a.address);
      if (why) throw new Error(`${host} resolves to a refused address: ${why}`);
    }
    return addresses[0]!;
  }

  private async resolveWithin(host: string): Promise<ResolvedAddress[] | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), this.lookupTimeoutMs);
    });
    try {
      return await Promise.race([this.resolve(host).catch(() => null), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** `raw` as a URL the controller may fetch: absolute, http or https; else 400 COULD_NOT_VALIDATE on `field`. */
export const parseFetchableUrl = httpUrl;
