import { createHash, randomUUID } from 'node:crypto';
import { ApiError } from '@ziti/errors';
import type { ApiSessionManager } from '../domain/api-session-manager.js';
import type { OidcSettings } from '../domain/controller-settings.js';
import { type ApiSession, isDisabled } from '../domain/model.js';
import type { PkiContext } from '../domain/pki-context.js';
import type { UnitOfWork } from '../domain/ports.js';
import type { AuthRequests } from './auth-requests.js';
import { ACCESS_TOKEN_SECONDS, ID_TOKEN_SECONDS, OIDC_CLIENT_IDS, REFRESH_TOKEN_SECONDS, TOKEN_TYPE } from './claims.js';
import type { KeyRing } from './key-ring.js';
import { ACCESS_TOKEN_TYPE, REFRESH_TOKEN_TYPE, ID_TOKEN_TYPE, SCOPES, TOKEN_EXCHANGE, oauth, uriAllowed, withParams } from './oauth.js';
import type { RevocationPort } from './ports.js';
import type { RefreshRotation } from './refresh-rotation.js';

export interface TokenAnswer {
  access_token: string;
  /** `Bearer`; `N_A` when an exchange answers an ID token (RFC 8693 §2.2.1). */
  token_type: 'Bearer' | 'N_A';
  expires_in: number;
  refresh_token?: string;
  id_token?: string;
  issued_token_type?: string;
  scope?: string;
  /** The API session certificate signed from the login's (or the request's) CSR, PEM. */
  session_cert?: string;
}

/** The facts a token is issued from: an auth request at code exchange, or a token of ours later. */
interface Grant {
  identityId: string;
  apiSessionId: string;
  clientId: string;
  scopes: string[];
  amr: string[];
  authTime: number;
  configTypes: string[];
  authenticatorId: string;
  certFingerprints: string[];
  authCertFingerprint?: string;
  remoteAddress: string;
  sdkInfo: Record<string, unknown> | null;
  envInfo: Record<string, unknown> | null;
  cert: { improperClientCertChain: boolean; isCertExtendable: boolean; isCertExtendRequested: boolean; isCertKeyRollRequested: boolean };
  nonce?: string;
}

/** What the token grants need. */
export interface GrantDeps {
  requests: AuthRequests;
  sessions: ApiSessionManager;
  uow: UnitOfWork;
  keys: KeyRing;
  revocations: RevocationPort;
  /** The single use of refresh tokens across replicas. */
  rotation: RefreshRotation;
  /** Signs API session certificates (`OIDC_AUTH_WITH_CSR`). */
  pki: Pick<PkiContext, 'signIdentityCsr'>;
  /** The effective OIDC settings of this controller (redirect and post-logout URIs). */
  settings: () => Promise<OidcSettings>;
  now?: () => number;
}

const sha1Hex = (der: Buffer) => createHash('sha1').update(der).digest('hex');
const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const record = (v: unknown): Record<string, unknown> | null => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null);

/**
 * The token side of the provider (OIDC.md "Token endpoint", "Revocation and end-session"): the
 * code exchange, refresh with rotation, token exchange, RFC 7009 revocation, end-session and
 * userinfo. HTTP-free, as the provider.
 */
export class TokenGrants {
  private readonly now: () => number;

  constructor(private readonly d: GrantDeps) {
    this.now = d.now ?? Date.now;
  }

  /** The token endpoint (form parameters, first value each), for the client `clientId` (form or Basic). */
  async token(issuer: string, form: Record<string, string>, clientId: string | undefined, clientCertChain: Buffer[]): Promise<TokenAnswer> {
    const client = this.client(clientId);
    switch (form.grant_type) {
      case 'authorization_code':
        return this.exchangeCode(issuer, form, client);
      case 'refresh_token':
        return this.refresh(issuer, form, client, clientCertChain);
      case TOKEN_EXCHANGE:
        return this.exchangeToken(issuer, form, client, clientCertChain);
      case undefined:
      case '':
        throw oauth('invalid_request', 'grant_type missing');
      default:
        throw oauth('unsupported_grant_type', `${form.grant_type} not supported`);
    }
  }

  /** A known client id (`openziti`, `native`); else 400 `invalid_client`. */
  client(clientId: string | undefined): string {
    if (!clientId || !(OIDC_CLIENT_IDS as readonly string[]).includes(clientId)) throw oauth('invalid_client', 'client not found');
    return clientId;
  }

  private async exchangeCode(issuer: string, form: Record<string, string>, clientId: string): Promise<TokenAnswer> {
    // The C SDK sends the tail of its callback (`<code>&state=...`) unescaped: the code ends at `&`.
    const code = (form.code ?? '').split('&')[0]!;
    if (!code) throw oauth('invalid_request', 'code missing');
    if (!form.code_verifier) throw oauth('invalid_request', 'code_verifier missing');
    const request = await this.d.requests.redeem(code);
    if (!request || !request.login) throw oauth('invalid_grant', 'invalid code');
    if (request.clientId !== clientId) throw oauth('invalid_grant', 'invalid client id');
    // RFC 6749 §4.1.3: the redirect URI of the authorization request (every request names one) is required, and equal.
    if (form.redirect_uri !== request.redirectUri) throw oauth('invalid_grant', form.redirect_uri ? 'redirect_uri does not correspond' : 'redirect_uri missing');
    if (s256(form.code_verifier) !== request.codeChallenge) throw oauth('invalid_grant', 'invalid code challenge');
    const login = request.login;
    const nowS = Math.floor(this.now() / 1000);
    const refreshExp = nowS + REFRESH_TOKEN_SECONDS;
    const totp = request.amr.includes('totp');
    const session: ApiSession = {
      id: request.apiSessionId,
      token: `oidc:${randomUUID()}`,
      identityId: login.identityId,
      authenticatorId: login.authenticatorId,
      ipAddress: login.ipAddress,
      configTypes: request.configTypes,
      isMfaRequired: login.totpRequired,
      isMfaComplete: totp,
      mfaCompletedAt: totp ? new Date(login.authTime * 1000) : null,
      isCertExtendable: login.cert?.isCertExtendable ?? false,
      isCertExtendRequested: login.cert?.isCertExtendRequested ?? false,
      isCertKeyRollRequested: login.cert?.isCertKeyRollRequested ?? false,
      improperClientCertChain: login.cert?.improperClientCertChain ?? false,
      lastActivityAt: new Date(nowS * 1000),
      kind: 'oidc',
      expiresAt: new Date(refreshExp * 1000),
      tags: {},
      createdAt: new Date(nowS * 1000),
      updatedAt: new Date(nowS * 1000),
    };
    const identity = await this.d.uow.repos.identities.findById(login.identityId);
    if (!identity) throw oauth('invalid_grant', 'the identity no longer exists');
    const signed = login.csrPem ? await this.signCsr(login.identityId, request.apiSessionId, login.csrPem) : undefined;
    const changed = (stored: unknown, reported: Record<string, unknown> | null) =>
      reported !== null && JSON.stringify(stored) !== JSON.stringify(reported) ? reported : undefined;
    await this.d.uow.createSession(session, { sdkInfo: changed(identity.sdkInfo, login.sdkInfo), envInfo: changed(identity.envInfo, login.envInfo) });
    const grant: Grant = {
      identityId: login.identityId,
      apiSessionId: request.apiSessionId,
      clientId,
      scopes: request.scopes,
      amr: request.amr,
      authTime: login.authTime,
      configTypes: request.configTypes,
      authenticatorId: login.authenticatorId,
      certFingerprints: [...(login.certFingerprint ? [login.certFingerprint] : []), ...(signed ? [signed.fingerprint] : [])],
      ...(login.certFingerprint ? { authCertFingerprint: login.certFingerprint } : {}),
      remoteAddress: login.ipAddress,
      sdkInfo: login.sdkInfo,
      envInfo: login.envInfo,
      cert: {
        improperClientCertChain: session.improperClientCertChain,
        isCertExtendable: session.isCertExtendable,
        isCertExtendRequested: session.isCertExtendRequested,
        isCertKeyRollRequested: session.isCertKeyRollRequested,
      },
      nonce: request.nonce,
    };
    return withCert(await this.issue(issuer, grant, { access: true, refresh: true, refreshExp }), signed);
  }

  /**
   * A token of ours of type `type` that may still be used for a grant (signature, expiry, client,
   * proof of possession, revocation). A refresh token that was rotated away ends its family first.
   */
  private async subject(token: string | undefined, type: 'a' | 'r', clientId: string | null, chain: Buffer[]): Promise<{ grant: Grant; jti: string; exp: number }> {
    if (!token) throw oauth('invalid_request', type === 'r' ? 'refresh_token missing' : 'subject_token missing');
    const v = await this.d.keys.verify(token);
    if (!v.ok || v.claims.z_t !== type) throw oauth('invalid_grant', 'invalid token');
    const c = v.claims;
    const grant = grantOf(c);
    if (!grant || typeof c.jti !== 'string' || typeof c.exp !== 'number') throw oauth('invalid_grant', 'invalid token');
    if (clientId !== null && grant.clientId !== clientId) throw oauth('invalid_grant', 'invalid client id');
    if (grant.certFingerprints.length > 0) {
      const leaf = chain[0];
      if (!leaf || !grant.certFingerprints.includes(sha1Hex(leaf))) throw oauth('invalid_grant', 'a client certificate of the session is required');
    }
    if (type === 'r' && (await this.d.rotation.use(c.jti)) === 'rotated') await this.replayed(grant);
    if (await this.d.revocations.isRevoked({ jti: c.jti, z_asid: grant.apiSessionId, sub: grant.identityId, iat: c.iat as number })) {
      throw oauth('invalid_grant', 'the token is revoked');
    }
    return { grant, jti: c.jti, exp: c.exp };
  }

  /**
   * A refresh token that was rotated away came back (RFC 9700 §4.14.2): whoever holds it, its
   * family is compromised. The API session of the login it descends from ends (API_SESSION
   * revocation, session deleted), so every refresh and access token of that login is refused.
   */
  private async replayed(grant: Grant): Promise<never> {
    await this.d.revocations.revoke('API_SESSION', grant.apiSessionId);
    await this.d.sessions.logout(grant.apiSessionId);
    throw oauth('invalid_grant', 'the refresh token was already used: its session has ended');
  }

  /**
   * Rotation (RFC 9700 §4.14.2): the refresh token is claimed once across replicas, so exactly one
   * of any parallel refreshes of it succeeds (the others: `invalid_grant`); then it is revoked and
   * marked rotated, and presenting it again ends its family. A refresh that fails before its
   * successor exists releases the claim.
   */
  private async refresh(issuer: string, form: Record<string, string>, clientId: string, chain: Buffer[]): Promise<TokenAnswer> {
    const { grant, jti, exp } = await this.subject(form.refresh_token, 'r', clientId, chain);
    if (form.scope !== undefined && form.scope !== '') {
      const wanted = form.scope.split(' ').filter(Boolean);
      if (wanted.some((s) => !grant.scopes.includes(s))) throw oauth('invalid_scope', 'scopes may only narrow');
      grant.scopes = wanted;
    }
    const use = await this.d.rotation.claim(jti, exp);
    if (use === 'rotated') return this.replayed(grant);
    if (use === 'in-use') throw oauth('invalid_grant', 'the refresh token is being used by another request');
    try {
      const signed = form.csr_pem ? await this.signCsr(grant.identityId, grant.apiSessionId, form.csr_pem) : undefined;
      if (signed) grant.certFingerprints = [...grant.certFingerprints, signed.fingerprint];
      const refreshExp = await this.extend(grant.apiSessionId);
      const answer = withCert(await this.issue(issuer, grant, { access: true, refresh: true, refreshExp }), signed);
      await this.d.revocations.revoke('JTI', jti, { expiresAt: new Date(exp * 1000) });
      await this.d.rotation.rotated(jti, exp);
      return answer;
    } catch (err) {
      await this.d.rotation.release(jti).catch(() => undefined);
      throw err;
    }
  }

  private async exchangeToken(issuer: string, form: Record<string, string>, clientId: string, chain: Buffer[]): Promise<TokenAnswer> {
    const subjectType = form.subject_token_type;
    if (subjectType !== ACCESS_TOKEN_TYPE && subjectType !== REFRESH_TOKEN_TYPE) throw oauth('invalid_request', `exchange subject type (${subjectType ?? ''}) is not supported`);
    const requested = form.requested_token_type || subjectType;
    if (subjectType === ACCESS_TOKEN_TYPE && requested === REFRESH_TOKEN_TYPE) throw oauth('invalid_request', 'exchanging an access token for a refresh token is not supported');
    if (requested !== ACCESS_TOKEN_TYPE && requested !== REFRESH_TOKEN_TYPE && requested !== ID_TOKEN_TYPE) throw oauth('invalid_request', `requested token type (${requested}) is not supported`);
    for (const aud of (form.audience ?? '').split(' ').filter(Boolean)) {
      if (!(OIDC_CLIENT_IDS as readonly string[]).includes(aud)) throw oauth('invalid_request', `invalid audience requested [${aud}]`);
    }
    const scopes = (form.scope ?? '').split(' ').filter(Boolean);
    if (scopes.some((s) => !SCOPES.includes(s))) throw oauth('invalid_scope', 'invalid scope requested');
    const { grant } = await this.subject(form.subject_token, subjectType === ACCESS_TOKEN_TYPE ? 'a' : 'r', null, chain);
    grant.clientId = clientId;
    if (scopes.length > 0) grant.scopes = scopes;
    if (requested === ID_TOKEN_TYPE) {
      // OpenZiti's SDKs ask for the identity's ID token this way; as its controller (zitadel) does,
      // the answer carries it in access_token, with token type N_A, and nothing else.
      const issued = await this.issue(issuer, { ...grant, scopes: [...new Set([...grant.scopes, 'openid'])] }, { access: true, refresh: false, refreshExp: 0 });
      return { access_token: issued.id_token!, token_type: 'N_A', expires_in: ID_TOKEN_SECONDS, issued_token_type: ID_TOKEN_TYPE, scope: issued.scope };
    }
    const signed = form.csr_pem ? await this.signCsr(grant.identityId, grant.apiSessionId, form.csr_pem) : undefined;
    if (signed) grant.certFingerprints = [...grant.certFingerprints, signed.fingerprint];
    const refreshExp = await this.extend(grant.apiSessionId);
    const refresh = requested === REFRESH_TOKEN_TYPE;
    return { ...withCert(await this.issue(issuer, grant, { access: true, refresh, refreshExp }), signed), issued_token_type: requested };
  }

  /** An API session certificate from `csrPem`; a CSR pki-enrollment refuses is 400 `invalid_request`. */
  private async signCsr(identityId: string, apiSessionId: string, csrPem: string): Promise<{ certPem: string; fingerprint: string }> {
    try {
      return await this.d.pki.signIdentityCsr(identityId, csrPem, apiSessionId);
    } catch (err) {
      if (err instanceof ApiError && err.status < 500) throw oauth('invalid_request', `invalid CSR: ${err.cause?.message ?? err.message}`);
      throw err;
    }
  }

  /** Moves the session's end to a new refresh token's expiry; a session ended or expired refuses. */
  private async extend(apiSessionId: string): Promise<number> {
    const refreshExp = Math.floor(this.now() / 1000) + REFRESH_TOKEN_SECONDS;
    if (!(await this.d.uow.repos.apiSessions.extendOidc(apiSessionId, new Date(refreshExp * 1000)))) throw oauth('invalid_grant', 'the API session has ended');
    return refreshExp;
  }

  /** The tokens of `grant`, with the identity's admin flag and external id read again. */
  private async issue(issuer: string, grant: Grant, what: { access: boolean; refresh: boolean; refreshExp: number }): Promise<TokenAnswer> {
    const identity = await this.d.uow.repos.identities.findById(grant.identityId);
    if (!identity || isDisabled(identity)) throw oauth('invalid_grant', 'the identity is not allowed to log in');
    const iat = Math.floor(this.now() / 1000);
    const base = { iss: issuer, sub: grant.identityId, aud: [grant.clientId], iat, nbf: iat };
    const ziti = {
      auth_time: grant.authTime,
      amr: grant.amr,
      client_id: grant.clientId,
      scopes: grant.scopes,
      z_asid: grant.apiSessionId,
      ...(identity.externalId ? { z_eid: identity.externalId } : {}),
      ...(identity.isAdmin ? { z_ia: true } : {}),
      ...(grant.configTypes.length > 0 ? { z_ct: grant.configTypes } : {}),
      z_aid: grant.clientId,
      z_cfs: grant.certFingerprints,
      ...(grant.authCertFingerprint ? { z_acf: grant.authCertFingerprint } : {}),
      z_sdk: grant.sdkInfo,
      z_env: grant.envInfo,
      z_ra: grant.remoteAddress,
      z_ice: grant.cert.isCertExtendable,
      z_authid: grant.authenticatorId,
      z_cer: grant.cert.isCertExtendRequested,
      z_ckrr: grant.cert.isCertKeyRollRequested,
      z_iccc: grant.cert.improperClientCertChain,
    };
    const answer: TokenAnswer = {
      access_token: await this.d.keys.sign({ ...base, exp: iat + ACCESS_TOKEN_SECONDS, jti: randomUUID(), ...ziti, z_t: TOKEN_TYPE.access }),
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_SECONDS,
    };
    if (what.refresh) answer.refresh_token = await this.d.keys.sign({ ...base, exp: what.refreshExp, jti: randomUUID(), ...ziti, z_t: TOKEN_TYPE.refresh });
    if (grant.scopes.includes('openid')) {
      answer.id_token = await this.d.keys.sign({
        ...base,
        exp: iat + ID_TOKEN_SECONDS,
        auth_time: grant.authTime,
        amr: grant.amr,
        azp: grant.clientId,
        ...(grant.nonce ? { nonce: grant.nonce } : {}),
        z_asid: grant.apiSessionId,
        ...(identity.isAdmin ? { z_ia: true } : {}),
        ...(identity.externalId ? { z_eid: identity.externalId } : {}),
        name: identity.name,
      });
    }
    answer.scope = grant.scopes.join(' ');
    return answer;
  }

  /** RFC 7009: a token of ours gets a JTI revocation until its expiry; anything else is ignored. */
  async revoke(token: string | undefined): Promise<void> {
    if (!token) throw oauth('invalid_request', 'token missing');
    const v = await this.d.keys.verify(token, { ignoreExpiry: true });
    if (!v.ok || typeof v.claims.jti !== 'string' || typeof v.claims.exp !== 'number') return;
    const expiresAt = new Date(v.claims.exp * 1000);
    if (expiresAt.getTime() <= this.now()) return;
    await this.d.revocations.revoke('JTI', v.claims.jti, { expiresAt });
  }

  /** Ends the API session of `id_token_hint` (API_SESSION revocation, session deleted); where to send the browser. */
  async endSession(issuer: string, p: { id_token_hint?: string; post_logout_redirect_uri?: string; state?: string }): Promise<{ location: string }> {
    if (p.post_logout_redirect_uri) {
      const settings = await this.d.settings();
      if (!uriAllowed(p.post_logout_redirect_uri, settings.postLogoutUris)) throw oauth('invalid_request', 'post_logout_redirect_uri invalid');
    }
    if (p.id_token_hint) {
      const v = await this.d.keys.verify(p.id_token_hint, { ignoreExpiry: true });
      if (!v.ok || typeof v.claims.z_asid !== 'string') throw oauth('invalid_request', 'id_token_hint invalid');
      await this.d.revocations.revoke('API_SESSION', v.claims.z_asid);
      await this.d.sessions.logout(v.claims.z_asid);
    }
    if (p.post_logout_redirect_uri) return { location: withParams(p.post_logout_redirect_uri, { state: p.state }) };
    return { location: `${issuer}/logged-out` };
  }

  /** `/userinfo` with a bearer access token of ours; null when it is not one (401). */
  async userinfo(token: string | undefined): Promise<Record<string, unknown> | null> {
    if (!token) return null;
    const v = await this.d.keys.verify(token);
    if (!v.ok || v.claims.z_t !== TOKEN_TYPE.access || typeof v.claims.sub !== 'string') return null;
    const c = v.claims;
    if (await this.d.revocations.isRevoked({ jti: c.jti as string, z_asid: c.z_asid as string, sub: c.sub as string, iat: c.iat as number })) return null;
    const identity = await this.d.uow.repos.identities.findById(c.sub as string);
    if (!identity) return null;
    return { sub: identity.id, name: identity.name, z_ia: identity.isAdmin, ...(identity.externalId ? { z_eid: identity.externalId } : {}) };
  }
}

/** The grant carried by a token of ours; null when its claims are not ours. */
function grantOf(c: Record<string, unknown>): Grant | null {
  if (typeof c.sub !== 'string' || typeof c.z_asid !== 'string' || typeof c.client_id !== 'string' || typeof c.auth_time !== 'number') return null;
  return {
    identityId: c.sub,
    apiSessionId: c.z_asid,
    clientId: c.client_id,
    scopes: strings(c.scopes),
    amr: strings(c.amr),
    authTime: c.auth_time,
    configTypes: strings(c.z_ct),
    authenticatorId: typeof c.z_authid === 'string' ? c.z_authid : '',
    certFingerprints: strings(c.z_cfs),
    ...(typeof c.z_acf === 'string' ? { authCertFingerprint: c.z_acf } : {}),
    remoteAddress: typeof c.z_ra === 'string' ? c.z_ra : '',
    sdkInfo: record(c.z_sdk),
    envInfo: record(c.z_env),
    cert: { improperClientCertChain: c.z_iccc === true, isCertExtendable: c.z_ice === true, isCertExtendRequested: c.z_cer === true, isCertKeyRollRequested: c.z_ckrr === true },
  };
}

function withCert(answer: TokenAnswer, signed: { certPem: string } | undefined): TokenAnswer {
  return signed ? { ...answer, session_cert: signed.certPem } : answer;
}
