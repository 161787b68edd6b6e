import { X509Certificate, createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { verifyJwt, jwtKid } from './jwt.js';
import type { LegacySessions } from './legacy-sessions.js';
import type { Peers } from '../grpc/peers.js';

/** Why a router's request was refused (OpenZiti's session errors). */
export class SessionRefusal extends Error {
  constructor(
    message: string,
    readonly code: 'INVALID_SESSION' | 'INVALID_API_SESSION' | 'NO_ACCESS' | 'WRONG_TYPE' | 'NOT_FOUND',
  ) {
    super(message);
  }
}

export interface CallerSession {
  apiSessionId: string;
  identityId: string;
  serviceId: string;
  sessionId: string;
  sessionType: 'Dial' | 'Bind';
  legacy: boolean;
}

const AUDIENCES = ['openziti', 'native'];
const KEYS_TTL_MS = 30_000;

/**
 * Checks the tokens a router forwards for an SDK (OpenZiti `handler_edge_ctrl/common.go`): the API
 * session (an OIDC access token verified with identity-auth's keys, or a legacy token the
 * controller pushed), the service session token (signed with the edge signing key, bound to that
 * API session and identity; a legacy one must still exist), its type, and the identity's access to
 * the service through this router.
 */
export class SessionValidator {
  private keys: { at: number; byKid: Map<string, KeyObject> } | undefined;
  private signing: { kid: string; key: KeyObject } | undefined;

  constructor(
    private readonly peers: Peers,
    private readonly legacy: LegacySessions,
  ) {}

  async validate(req: { apiSessionToken: string; sessionToken: string; routerId: string; type: 'Dial' | 'Bind' }): Promise<CallerSession> {
    const api = await this.apiSession(req.apiSessionToken);
    const claims = await this.sessionClaims(req.sessionToken);
    const serviceId = str(claims.sub);
    const sessionId = str(claims.jti);
    if (claims.z_t !== 's' || !serviceId || !sessionId) throw new SessionRefusal('invalid session token', 'INVALID_SESSION');
    if (str(claims.z_asid) !== api.apiSessionId || str(claims.z_iid) !== api.identityId) throw new SessionRefusal('session token of another API session', 'INVALID_SESSION');
    const legacy = claims.z_leg === true;
    if (legacy) {
      const [row] = await this.peers.getSessions([sessionId]);
      if (!row || row.apiSessionId !== api.apiSessionId) throw new SessionRefusal('session not found', 'INVALID_SESSION');
    }
    if (claims.z_st !== req.type) throw new SessionRefusal(`session is not a ${req.type} session`, 'WRONG_TYPE');
    const access = await this.peers.getServiceAccess(api.identityId, serviceId);
    if (!access.visible || !access.permissions.includes(req.type)) throw new SessionRefusal('no access to the service', 'NO_ACCESS');
    if (!access.edgeRouters.some((r) => r.id === req.routerId)) throw new SessionRefusal('the identity may not use this router for the service', 'NO_ACCESS');
    return { ...api, serviceId, sessionId, sessionType: req.type, legacy };
  }

  private async apiSession(token: string): Promise<{ apiSessionId: string; identityId: string }> {
    if (!token) throw new SessionRefusal('no API session token', 'INVALID_API_SESSION');
    if (!token.startsWith('ey')) {
      const s = this.legacy.byTokenValue(token);
      if (!s) throw new SessionRefusal('unknown API session', 'INVALID_API_SESSION');
      return { apiSessionId: s.id, identityId: s.identityId };
    }
    const claims = await this.verify(token, async (kid) => (await this.oidcKeys()).get(kid));
    const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (claims.z_t !== 'a' || !aud.some((a) => AUDIENCES.includes(String(a))) || !str(claims.sub) || !str(claims.z_asid)) {
      throw new SessionRefusal('invalid access token', 'INVALID_API_SESSION');
    }
    return { apiSessionId: str(claims.z_asid), identityId: str(claims.sub) };
  }

  private sessionClaims(token: string): Promise<Record<string, unknown>> {
    if (!token.startsWith('ey')) return Promise.reject(new SessionRefusal('session tokens are JWTs', 'INVALID_SESSION'));
    return this.verify(token, async (kid) => {
      const s = await this.signingKey();
      return s.kid === kid ? s.key : undefined;
    }).catch((err: unknown) => {
      throw err instanceof SessionRefusal ? new SessionRefusal(err.message, 'INVALID_SESSION') : err;
    });
  }

  private async verify(token: string, keyFor: (kid: string) => Promise<KeyObject | undefined>): Promise<Record<string, unknown>> {
    const kid = jwtKid(token);
    if (kid === undefined) throw new SessionRefusal('malformed token', 'INVALID_API_SESSION');
    const key = await keyFor(kid);
    if (!key) throw new SessionRefusal('token signed by an unknown key', 'INVALID_API_SESSION');
    const claims = verifyJwt(token, key);
    if (!claims) throw new SessionRefusal('token does not verify or has expired', 'INVALID_API_SESSION');
    return claims;
  }

  private async oidcKeys(): Promise<Map<string, KeyObject>> {
    if (this.keys && Date.now() - this.keys.at < KEYS_TTL_MS) return this.keys.byKid;
    const keys = await this.peers.getTokenVerificationKeys();
    const byKid = new Map(keys.map((k) => [k.kid, createPublicKey({ key: Buffer.from(k.publicKeyDer), format: 'der', type: 'spki' })]));
    this.keys = { at: Date.now(), byKid };
    return byKid;
  }

  private async signingKey(): Promise<{ kid: string; key: KeyObject }> {
    if (this.signing) return this.signing;
    const c = await this.peers.getSigningCertificate();
    const cert = new X509Certificate(c.certPem);
    this.signing = { kid: c.kid || createHash('sha1').update(cert.raw).digest('hex'), key: cert.publicKey };
    return this.signing;
  }
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}
