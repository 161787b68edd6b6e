import { type KeyObject, X509Certificate, createPublicKey } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction, Socket } from 'node:net';
import type { JwksSource } from '../domain/ext-jwt/jwt-verifier.js';
import { canonicalAddress } from './outbound-address.js';
import { OutboundGuard, parseFetchableUrl } from './outbound-url.js';

export interface JwksFetcherOptions {
  /** Whole-request timeout. Default 5 s. */
  timeoutMs?: number;
  /** Largest JWKS document accepted. Default 1 MiB. */
  maxBytes?: number;
  /** How long fetched keys are used before refetching. Default 5 min. */
  ttlMs?: number;
  /** An unknown `kid` refetches at most this often per endpoint. Default 1 s. */
  minRefreshMs?: number;
  /** Where requests may go; default an {@link OutboundGuard} that refuses private addresses. */
  guard?: OutboundGuard;
  log?: (m: string) => void;
}

interface Entry {
  keys: Map<string, KeyObject>;
  fetchedAt: number;
}

/** Parses a JWKS document into its verification keys by `kid` (x5c certificates or JWK parameters). */
export function parseJwks(doc: unknown): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>();
  const list = (doc as { keys?: unknown })?.keys;
  if (!Array.isArray(list)) return keys;
  for (const jwk of list as Record<string, unknown>[]) {
    if (!jwk || typeof jwk.kid !== 'string' || jwk.use === 'enc') continue;
    try {
      const x5c = Array.isArray(jwk.x5c) && typeof jwk.x5c[0] === 'string' ? jwk.x5c[0] : undefined;
      const key = x5c
        ? new X509Certificate(Buffer.from(x5c, 'base64')).publicKey
        : createPublicKey({ key: jwk as unknown as import('node:crypto').JsonWebKey, format: 'jwk' });
      if (key.type === 'public') keys.set(jwk.kid, key);
    } catch {
      // an unusable key is skipped; the others still count
    }
  }
  return keys;
}

/**
 * JWKS keys of external JWT signers, fetched by the controller itself, so every fetch is guarded:
 * http(s) only; every address the host resolves to must pass the {@link OutboundGuard}, the
 * connection goes to the address that was checked (no re-resolution in between) and is refused
 * when the socket's peer is another one; no redirects; a timeout and a size limit.
 * Keys are cached per endpoint; an unknown `kid` refetches at most once a second.
 */
export class JwksFetcher implements JwksSource {
  private readonly entries = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<Entry>>();
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly ttlMs: number;
  private readonly minRefreshMs: number;
  private readonly log: (m: string) => void;
  private readonly guard: OutboundGuard;

  constructor(opts: JwksFetcherOptions = {}) {
    this.guard = opts.guard ?? new OutboundGuard();
    this.timeoutMs = opts.timeoutMs ?? 5000;
    this.maxBytes = opts.maxBytes ?? 1024 * 1024;
    this.ttlMs = opts.ttlMs ?? 5 * 60_000;
    this.minRefreshMs = opts.minRefreshMs ?? 1000;
    this.log = opts.log ?? (() => undefined);
  }

  async key(jwksEndpoint: string, kid: string): Promise<KeyObject | null> {
    const now = Date.now();
    let entry = this.entries.get(jwksEndpoint);
    if (!entry || now - entry.fetchedAt > this.ttlMs) entry = await this.refresh(jwksEndpoint, entry);
    if (!entry.keys.has(kid) && Date.now() - entry.fetchedAt >= this.minRefreshMs) entry = await this.refresh(jwksEndpoint, entry);
    return entry.keys.get(kid) ?? null;
  }

  private refresh(url: string, stale: Entry | undefined): Promise<Entry> {
    let p = this.inflight.get(url);
    if (!p) {
      p = this.fetchJson(url)
        .then((doc) => ({ keys: parseJwks(doc), fetchedAt: Date.now() }))
        .catch((err: unknown) => {
          this.log(`identity-auth: fetching JWKS ${url} failed: ${(err as Error).message}`);
          // keep serving the previous keys, but do not refetch before minRefreshMs
          return { keys: stale?.keys ?? new Map<string, KeyObject>(), fetchedAt: Date.now() };
        })
        .then((entry) => {
          if (this.entries.size > 500) this.entries.clear();
          this.entries.set(url, entry);
          return entry;
        })
        .finally(() => this.inflight.delete(url));
      this.inflight.set(url, p);
    }
    return p;
  }

  /** GET `url` under the guards; resolves the parsed JSON body of a 200. */
  async fetchJson(raw: string): Promise<unknown> {
    const url = parseFetchableUrl('jwksEndpoint', raw);
    const pinned = await this.guard.pin(url);
    const lookup: LookupFunction = (_hostname, options, cb) => {
      if ((options as { all?: boolean }).all) (cb as (e: null, a: { address: string; family: number }[]) => void)(null, [pinned]);
      else cb(null, pinned.address, pinned.family);
    };
    const client = url.protocol === 'https:' ? https : http;
    return new Promise((resolvePromise, rejectPromise) => {
      let settled = false;
      const resolve = (v: unknown): void => {
        if (settled) return;
        settled = true;
        resolvePromise(v);
      };
      const reject = (e: Error): void => {
        if (settled) return;
        settled = true;
        rejectPromise(e);
      };
      const req = client.get(url, { lookup, timeout: this.timeoutMs, headers: { accept: 'application/json' }, agent: false }, (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return reject(new Error(`status ${res.statusCode}`));
        }
        const parts: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > this.maxBytes) {
            reject(new Error(`larger than ${this.maxBytes} bytes`));
            req.destroy();
          } else parts.push(c);
        });
        res.on('error', reject);
        res.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(parts).toString('utf8')));
          } catch (err) {
            reject(err as Error);
          }
        });
      });
      // Before anything is written: the peer must be the pinned, checked address.
      req.once('socket', (socket: Socket) => {
        socket.prependOnceListener('connect', () => {
          const peer = socket.remoteAddress ?? '';
          if (canonicalAddress(peer) !== canonicalAddress(pinned.address) || !this.guard.allows(peer)) {
            reject(new Error(`connected to ${peer || 'an unknown address'} instead of ${pinned.address}`));
            req.destroy();
          }
        });
      });
      const timedOut = (): void => {
        reject(new Error(`timed out after ${this.timeoutMs} ms`));
        req.destroy();
      };
      const timer = setTimeout(timedOut, this.timeoutMs);
      req.on('close', () => clearTimeout(timer));
      req.on('timeout', timedOut);
      req.on('error', reject);
    });
  }
}
