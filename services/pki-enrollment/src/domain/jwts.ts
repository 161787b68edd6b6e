import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { ApiError } from '@ziti/errors';
import { publicJwk, signJwt, signJwtOffThread, signNonce } from '../crypto/jwt.js';
import type { ControllerPki } from './pki.js';
import type { Repositories } from './ports.js';

/** What the session context says of one session token (pki-enrollment adds the rest). */
export interface SessionTokenInput {
  id: string;
  serviceId: string;
  apiSessionId: string;
  identityId: string;
  sessionType: string;
  legacy: boolean;
  /** Seconds since the epoch. */
  issuedAt: number;
  expiresAt: number;
}

const ADDRESS_SETTING = 'edge_api_address';

/** The Go controller's control-plane port (`DefaultCtrlAdvertisedPort`): where routers dial by default. */
export const DEFAULT_CTRL_PORT = 6262;

/** The host of a `host[:port]` address (`[v6]:port` and a bare IPv6 address included), bracketed when IPv6. */
export function hostOf(address: string): string {
  const a = address.trim();
  if (a.startsWith('[')) return a.slice(0, a.indexOf(']') + 1);
  if (isIP(a) === 6) return `[${a}]`;
  const colon = a.lastIndexOf(':');
  return colon > 0 ? a.slice(0, colon) : a;
}

/**
 * The control endpoints enrollment JWTs name (`ctrls`, which `ziti router enroll` writes into the
 * router's config): `ctrlAddresses` as given, else `tls:<ctrlAdvertisedAddress>`, else the edge
 * API's host on port 6262.
 */
export function ctrlEndpoints(edgeAddress: string, o: { ctrlAddresses?: readonly string[]; ctrlAdvertisedAddress?: string }): string[] {
  if (o.ctrlAddresses && o.ctrlAddresses.length > 0) return [...o.ctrlAddresses];
  if (o.ctrlAdvertisedAddress) return [`tls:${o.ctrlAdvertisedAddress}`];
  return [`tls:${hostOf(edgeAddress)}:${DEFAULT_CTRL_PORT}`];
}
const ADDRESS_CACHE_MS = 5_000;

/**
 * Where clients reach the edge API (`host:port`): the configured address when there is one,
 * else the one the gateway reported in IssueServerCertificate (stored, so every replica knows it).
 */
export class EdgeAddress {
  private cached?: { value: string; at: number };

  constructor(
    private readonly repos: Pick<Repositories, 'pki'>,
    private readonly configured?: string,
  ) {}

  async get(): Promise<string> {
    if (this.configured) return this.configured;
    if (this.cached && Date.now() - this.cached.at < ADDRESS_CACHE_MS) return this.cached.value;
    const value = await this.repos.pki.getSetting(ADDRESS_SETTING);
    if (!value) {
      throw ApiError.fromCode('UNHANDLED', {
        status: 503,
        message: 'The edge API address is not known yet',
        cause: { code: 'UNHANDLED', message: 'no gateway has reported its address and ZITI_CTRL_ADVERTISED_ADDRESS is not set' },
      });
    }
    this.cached = { value, at: Date.now() };
    return value;
  }

  /** Records the gateway's address (ignored when one is configured). */
  async record(address: string): Promise<void> {
    if (this.configured || !address) return;
    if (this.cached?.value === address) return;
    await this.repos.pki.setSetting(ADDRESS_SETTING, address);
    this.cached = { value: address, at: Date.now() };
  }
}

/**
 * The JWTs of this context, all signed by the edge API server key (the TLS certificate served at
 * their issuer, which is what SDKs verify them with):
 * - enrollment JWTs (§6.5): `iss https://<addr>`, `sub`, `aud [""]`, `exp`, `jti` = token, `em`, `ctrls`; no iat/nbf;
 * - the network JWT (§6.7): `em network`, `iss = sub = https://<addr>/`, `aud ["openziti-enroller"]`, `jti`; cached;
 * - a CA's JWT: `em ca`, `iss https://<addr>/`, `sub = jti = caId`, `aud ["openziti-enroller"]`.
 */
export class Jwts {
  private network?: { key: string; jwt: string };

  constructor(
    private readonly pki: ControllerPki,
    private readonly address: EdgeAddress,
    private readonly ctrl: { ctrlAddresses?: readonly string[]; ctrlAdvertisedAddress?: string | (() => string | undefined) } = {},
  ) {}

  async issuer(): Promise<string> {
    return `https://${await this.address.get()}`;
  }

  async enrollment(e: { sub: string; jti: string; em: string; expiresAt: Date }): Promise<string> {
    const address = await this.address.get();
    const { signer } = await this.pki.currentServer();
    return signJwt(signer, {
      iss: `https://${address}`,
      sub: e.sub,
      aud: [''],
      exp: Math.floor(e.expiresAt.getTime() / 1000),
      jti: e.jti,
      em: e.em,
      ctrls: ctrlEndpoints(address, {
        ctrlAddresses: this.ctrl.ctrlAddresses,
        ctrlAdvertisedAddress: typeof this.ctrl.ctrlAdvertisedAddress === 'function' ? this.ctrl.ctrlAdvertisedAddress() : this.ctrl.ctrlAdvertisedAddress,
      }),
    });
  }

  async networkJwt(): Promise<string> {
    const address = await this.address.get();
    const { signer } = await this.pki.currentServer();
    const key = `${signer.kid} ${address}`;
    if (this.network?.key === key) return this.network.jwt;
    const iss = `https://${address}/`;
    const jwt = await signJwt(signer, { iss, sub: iss, aud: ['openziti-enroller'], jti: randomUUID(), em: 'network' });
    this.network = { key, jwt };
    return jwt;
  }

  async caJwt(caId: string): Promise<string> {
    const { signer } = await this.pki.currentServer();
    return signJwt(signer, { iss: `https://${await this.address.get()}/`, sub: caId, aud: ['openziti-enroller'], jti: caId, em: 'ca' });
  }

  /**
   * Session (service access) tokens, OpenZiti's `ServiceAccessClaims` (§6.4): the caller (the
   * session context) gives ids, type and times; the issuer, audience and token type are fixed here,
   * so nothing but a session token can be had this way.
   */
  async sessionTokens(tokens: readonly SessionTokenInput[]): Promise<string[]> {
    const iss = await this.issuer();
    const { signer } = await this.pki.currentServer();
    return Promise.all(
      tokens.map((t) =>
        signJwtOffThread(signer, {
          iss, sub: t.serviceId, aud: ['openziti'], iat: t.issuedAt, exp: t.expiresAt, jti: t.id,
          z_asid: t.apiSessionId, z_iid: t.identityId, z_t: 's', z_st: t.sessionType, z_leg: t.legacy,
        }),
      ),
    );
  }

  /** The certificate whose key signs session tokens (and every other JWT here). */
  async signingCertificate(): Promise<{ certPem: string; kid: string; alg: string; issuer: string }> {
    const { signer } = await this.pki.currentServer();
    return { certPem: signer.cert.toString(), kid: signer.kid, alg: signer.alg, issuer: await this.issuer() };
  }

  async jwks(): Promise<{ keys: Record<string, unknown>[] }> {
    const { signer } = await this.pki.currentServer();
    return { keys: [publicJwk(signer)] };
  }

  /** Signs the caller's nonce with the key named `keyId` (the signer's `kid`). */
  async challenge(keyId: string, nonce: string): Promise<{ signature: string; algorithm: string; kid: string; caPool: string }> {
    const { signer } = await this.pki.currentServer();
    if (keyId !== signer.kid) throw ApiError.field('keyId', 'no signing key with this id', keyId);
    return { signature: signNonce(signer, nonce), algorithm: signer.alg, kid: signer.kid, caPool: this.pki.caBundlePem() };
  }
}
