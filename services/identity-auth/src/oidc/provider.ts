import { createHash, randomUUID } from 'node:crypto';
import { ApiError } from '@ziti/errors';
import type { ApiSessionManager } from '../domain/api-session-manager.js';
import type { Authenticator } from '../domain/authenticator.js';
import type { OidcSettings } from '../domain/controller-settings.js';
import type { Mfa } from '../domain/auth-model.js';
import type { MfaManager } from '../domain/mfa/mfa-manager.js';
import { type ApiSession, isDisabled } from '../domain/model.js';
import type { PkiContext } from '../domain/pki-context.js';
import type { UnitOfWork } from '../domain/ports.js';
import { type SecondaryFactorChecker, secondaryChallenge } from '../domain/session-state.js';
import { type AuthRequest, AuthRequests, type LoginFacts } from './auth-requests.js';
import { ACCESS_TOKEN_SECONDS, ID_TOKEN_SECONDS, OIDC_CLIENT_IDS, REFRESH_TOKEN_SECONDS, TOKEN_TYPE } from './claims.js';
import type { KeyRing } from './key-ring.js';
import type { RevocationPort } from './ports.js';

/** An OAuth error (RFC 6749 §5.2): `{error, error_description}` with its status. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
  }
}

const oauth = (error: string, description: string, status = 400) => new OAuthError(error, description, status);

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
export const REFRESH_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:refresh_token';
const SCOPES = ['openid', 'offline_access'];

/** `*` as the port of an allowed URI matches any port; everything else matches exactly. */
export function uriAllowed(uri: string, allowed: readonly string[] | undefined): boolean {
  for (const pattern of allowed ?? []) {
    if (pattern === uri) return true;
    const star = pattern.indexOf(':*');
    if (star < 0) continue;
    const prefix = pattern.slice(0, star + 1);
    const suffix = pattern.slice(star + 2);
    if (!uri.startsWith(prefix) || !uri.endsWith(suffix)) continue;
    const port = uri.slice(prefix.length, uri.length - suffix.length);
    if (/^[0-9]{1,5}$/.test(port) && Number(port) <= 65535) return true;
  }
  return false;
}

/** `/authorize` parameters (strings as sent; repeated ones as arrays). */
export interface AuthorizeParams {
  client_id?: string;
  redirect_uri?: string;
  response_type?: string;
  scope?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  state?: string;
  nonce?: string;
  audience?: string;
  method?: string;
  prompt?: string;
  configTypes: string[];
}

/** What a login endpoint received. */
export interface LoginInput {
  username?: string;
  password?: string;
  configTypes?: string[];
  sdkInfo?: Record<string, unknown>;
  envInfo?: Record<string, unknown>;
  csrPem?: string;
  bearerTokens: string[];
  clientCertChain: Buffer[];
  ipAddress: string;
}

/** An auth query (OpenZiti's `authQueries` entries). */
export type AuthQuery = Record<string, unknown>;

export type LoginOutcome = { done: true; request: AuthRequest } | { done: false; request: AuthRequest; queries: AuthQuery[]; totpOpen: boolean; challenge?: string };

export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
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

export interface ProviderDeps {
  requests: AuthRequests;
  authenticator: Authenticator;
  factors: SecondaryFactorChecker;
  mfa: MfaManager;
  sessions: ApiSessionManager;
  uow: UnitOfWork;
  keys: KeyRing;
  revocations: RevocationPort;
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
 * OpenZiti's OIDC provider (OIDC.md): authorization requests, the login steps, codes, the token
 * grants, revocation, end-session and userinfo. HTTP-free: `http.ts` maps requests onto it.
 */
export class OidcProvider {
  private readonly now: () => number;

  constructor(private readonly d: ProviderDeps) {
    this.now = d.now ?? Date.now;
  }

  discovery(issuer: string): Record<string, unknown> {
    const login = (p: string) => `${issuer}/login/${p}`;
    return {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      userinfo_endpoint: `${issuer}/userinfo`,
      jwks_uri: `${issuer}/keys`,
      revocation_endpoint: `${issuer}/revoke`,
      end_session_endpoint: `${issuer}/end_session`,
      scopes_supported: SCOPES,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token', TOKEN_EXCHANGE],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: this.d.keys.algorithms,
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      code_challenge_methods_supported: ['S256'],
      request_parameter_supported: false,
      ui_locales_supported: ['en'],
      openziti_endpoints: {
        password: login('password'),
        cert: login('cert'),
        ext_jwt: login('ext-jwt'),
        totp: login('totp'),
        totp_enroll: login('totp/enroll'),
        totp_enroll_verify: login('totp/enroll/verify'),
        auth_queries: login('auth-queries'),
      },
    };
  }

  jwks(): Promise<{ keys: Record<string, unknown>[] }> {
    return this.d.keys.jwks();
  }

  /**
   * A new auth request and the login path it continues at; an unknown client or a redirect URI not
   * allowed is thrown (never redirected); other errors are returned as a redirect to the client.
   */
  async authorize(issuer: string, p: AuthorizeParams, hasClientCert: boolean): Promise<{ location: string }> {
    if (!p.client_id) throw oauth('invalid_request', 'client_id missing');
    if (!(OIDC_CLIENT_IDS as readonly string[]).includes(p.client_id)) throw oauth('invalid_client', 'unknown client');
    if (!p.redirect_uri) throw oauth('invalid_request', 'redirect_uri missing');
    const settings = await this.d.settings();
    if (!uriAllowed(p.redirect_uri, settings.redirectUris)) throw oauth('invalid_request', 'the redirect_uri is not allowed');
    const fail = (error: string, description: string) => ({ location: withParams(p.redirect_uri!, { error, error_description: description, state: p.state }) });
    if (p.response_type !== 'code') return fail('unsupported_response_type', 'response_type must be code');
    const scopes = (p.scope ?? '').split(' ').filter(Boolean);
    if (!scopes.includes('openid')) return fail('invalid_scope', 'the scope must contain openid');
    if (scopes.some((s) => !SCOPES.includes(s))) return fail('invalid_scope', 'unsupported scope');
    if (!p.code_challenge) return fail('invalid_request', 'code_challenge is required for public clients');
    if (p.code_challenge_method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256');
    if (p.prompt?.split(' ').includes('none')) return fail('login_required', 'prompt none is not supported: a login is required');
    const request = await this.d.requests.create({
      clientId: p.client_id,
      redirectUri: p.redirect_uri,
      scopes,
      state: p.state ?? '',
      nonce: p.nonce ?? '',
      codeChallenge: p.code_challenge,
      audience: (p.audience ?? '').split(' ').filter(Boolean),
      configTypes: [...new Set(p.configTypes)],
    });
    const method = p.method === 'password' ? 'username' : p.method === 'cert' || p.method === 'ext-jwt' ? p.method : hasClientCert ? 'cert' : 'username';
    return { location: `${issuer.replace(/\/oidc$/, '')}/oidc/login/${method}?authRequestID=${request.id}` };
  }

  /** The auth request of a login step: unknown or expired → 401 INVALID_AUTH. */
  async request(id: string | undefined): Promise<AuthRequest> {
    const request = await this.d.requests.get(id);
    if (!request) throw ApiError.of('INVALID_AUTH');
    return request;
  }

  /** The primary factor, then whatever secondary factor the request's bearer tokens satisfy at once. */
  async login(id: string | undefined, method: 'password' | 'cert' | 'ext-jwt', input: LoginInput): Promise<LoginOutcome> {
    const request = await this.request(id);
    const { who, secondary } = await this.d.authenticator.verifyPrimary(method, input);
    const leaf = method === 'cert' ? input.clientCertChain[0] : undefined;
    const facts: LoginFacts = {
      identityId: who.identity.id,
      identityName: who.identity.name,
      authenticatorId: who.authenticatorId,
      method,
      authTime: Math.floor(this.now() / 1000),
      totpEnrolled: who.mfaVerified,
      totpRequired: who.mfaVerified || secondary.requireTotp,
      requiredSigner: secondary.requiredExtJwtSigner,
      ...(leaf ? { certFingerprint: sha1Hex(leaf) } : {}),
      ...(who.cert
        ? { cert: { improperClientCertChain: who.cert.improperClientCertChain, isCertExtendable: who.cert.isCertExtendable, isCertExtendRequested: who.cert.isCertExtendRequested, isCertKeyRollRequested: who.cert.isCertKeyRollRequested } }
        : {}),
      ipAddress: input.ipAddress,
      sdkInfo: input.sdkInfo ?? null,
      envInfo: input.envInfo ?? null,
      ...(input.csrPem ? { csrPem: input.csrPem } : {}),
    };
    // A second login of the same identity (the C SDK logs in again once it holds an ext-jwt) keeps its secondary factors.
    const kept = request.login?.identityId === facts.identityId ? request.amr.filter((a) => a === 'totp' || a.startsWith('ejs:')) : [];
    request.login = facts;
    request.amr = [method, ...kept];
    if (input.configTypes) request.configTypes = [...new Set([...request.configTypes, ...input.configTypes])];
    let challenge: string | undefined;
    const signer = facts.requiredSigner;
    if (signer && !request.amr.includes(`ejs:${signer}`)) {
      const factor = await this.d.factors.check(who.identity, signer, input.bearerTokens);
      if (factor.ok) request.amr.push(`ejs:${signer}`);
      else challenge = secondaryChallenge({ totpPending: false, totpEnrolled: false, extJwt: factor });
    }
    await this.d.requests.save(request);
    return this.outcome(request, challenge);
  }

  /** Where the request stands: done, or the open secondary factors. */
  async outcome(request: AuthRequest, challenge?: string): Promise<LoginOutcome> {
    const login = request.login;
    if (!login) throw ApiError.of('INVALID_AUTH');
    const totpOpen = login.totpRequired && !request.amr.includes('totp');
    const signerOpen = login.requiredSigner !== null && !request.amr.includes(`ejs:${login.requiredSigner}`);
    if (!totpOpen && !signerOpen) return { done: true, request };
    const queries: AuthQuery[] = [];
    if (totpOpen) {
      queries.push({ typeId: 'TOTP', provider: 'ziti', format: 'numeric', httpMethod: 'POST', httpUrl: './oidc/login/totp', minLength: 6, maxLength: 8, isTotpEnrolled: login.totpEnrolled });
    }
    if (signerOpen) {
      const s = await this.d.uow.repos.signers.findById(login.requiredSigner!);
      queries.push({ typeId: 'EXT-JWT', provider: 'url', id: login.requiredSigner, clientId: s?.clientId ?? '', httpUrl: s?.externalAuthUrl ?? '', scopes: s?.scopes ?? [] });
    }
    return { done: false, request, queries, totpOpen, ...(challenge ? { challenge } : {}) };
  }

  /** `/login/totp`: a TOTP code of the identity adds amr `totp`; a bad one is 400 `INVALID TOTP CODE`. */
  async totp(id: string | undefined, code: string): Promise<LoginOutcome> {
    const request = await this.primaryDone(id);
    const ok = code.length > 0 && code.length <= 13 && (await this.d.mfa.acceptLoginTotp(request.login!.identityId, request.apiSessionId, code.trim()));
    if (!ok) throw new ApiError({ code: 'INVALID TOTP CODE', message: 'an invalid TOTP code was supplied', status: 400 });
    if (!request.amr.includes('totp')) request.amr.push('totp');
    await this.d.requests.save(request);
    return this.outcome(request);
  }

  /** `POST /login/totp/enroll`: a new unverified enrollment of the request's identity. */
  async startTotpEnrollment(id: string | undefined): Promise<{ mfa: Mfa; identityName: string }> {
    const request = await this.primaryDone(id);
    await this.d.mfa.enroll(request.login!.identityId);
    return { mfa: await this.d.mfa.unverified(request.login!.identityId), identityName: request.login!.identityName };
  }

  /** `DELETE /login/totp/enroll`: drops the enrollment (a verified one needs a code), as `DELETE /current-identity/mfa`. */
  async deleteTotpEnrollment(id: string | undefined, code: string): Promise<void> {
    const request = await this.primaryDone(id);
    await this.d.mfa.removeOwn(request.login!.identityId, request.apiSessionId, code);
  }

  /** `POST /login/totp/enroll/verify`: verifies the enrollment; it counts as the TOTP factor. */
  async verifyTotpEnrollment(id: string | undefined, code: string): Promise<LoginOutcome> {
    const request = await this.primaryDone(id);
    await this.d.mfa.verifyForLogin(request.login!.identityId, request.apiSessionId, code);
    request.login!.totpEnrolled = true;
    if (!request.amr.includes('totp')) request.amr.push('totp');
    await this.d.requests.save(request);
    return this.outcome(request);
  }

  private async primaryDone(id: string | undefined): Promise<AuthRequest> {
    const request = await this.request(id);
    if (!request.login) throw ApiError.of('INVALID_AUTH');
    return request;
  }

  /** `/authorize/callback`: the code, once the request is fully authenticated; a redirect to the client. */
  async callback(id: string | undefined): Promise<{ location: string }> {
    const request = await this.request(id);
    const outcome = request.login ? await this.outcome(request) : undefined;
    if (!outcome?.done) return { location: withParams(request.redirectUri, { error: 'login_required', error_description: 'the authentication is not complete', state: request.state }) };
    const code = await this.d.requests.issueCode(request);
    return { location: withParams(request.redirectUri, { code, state: request.state }) };
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
    if (form.redirect_uri !== undefined && form.redirect_uri !== request.redirectUri) throw oauth('invalid_grant', 'redirect_uri does not correspond');
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

  /** A token of ours of type `type` that may still be used for a grant (signature, expiry, revocation, session, client). */
  private async subject(token: string | undefined, type: 'a' | 'r', clientId: string | null, chain: Buffer[]): Promise<Grant> {
    if (!token) throw oauth('invalid_request', type === 'r' ? 'refresh_token missing' : 'subject_token missing');
    const v = await this.d.keys.verify(token);
    if (!v.ok || v.claims.z_t !== type) throw oauth('invalid_grant', 'invalid token');
    const c = v.claims;
    const grant = grantOf(c);
    if (!grant) throw oauth('invalid_grant', 'invalid token');
    if (clientId !== null && grant.clientId !== clientId) throw oauth('invalid_grant', 'invalid client id');
    if (await this.d.revocations.isRevoked({ jti: c.jti as string, z_asid: grant.apiSessionId, sub: grant.identityId, iat: c.iat as number })) {
      throw oauth('invalid_grant', 'the token is revoked');
    }
    if (grant.certFingerprints.length > 0) {
      const leaf = chain[0];
      if (!leaf || !grant.certFingerprints.includes(sha1Hex(leaf))) throw oauth('invalid_grant', 'a client certificate of the session is required');
    }
    return grant;
  }

  private async refresh(issuer: string, form: Record<string, string>, clientId: string, chain: Buffer[]): Promise<TokenAnswer> {
    const grant = await this.subject(form.refresh_token, 'r', clientId, chain);
    const old = (await this.d.keys.verify(form.refresh_token!)) as { ok: true; claims: Record<string, unknown> };
    if (form.scope !== undefined && form.scope !== '') {
      const wanted = form.scope.split(' ').filter(Boolean);
      if (wanted.some((s) => !grant.scopes.includes(s))) throw oauth('invalid_scope', 'scopes may only narrow');
      grant.scopes = wanted;
    }
    const signed = form.csr_pem ? await this.signCsr(grant.identityId, grant.apiSessionId, form.csr_pem) : undefined;
    if (signed) grant.certFingerprints = [...grant.certFingerprints, signed.fingerprint];
    const refreshExp = await this.extend(grant.apiSessionId);
    await this.d.revocations.revoke('JTI', old.claims.jti as string, { expiresAt: new Date((old.claims.exp as number) * 1000) });
    return withCert(await this.issue(issuer, grant, { access: true, refresh: true, refreshExp }), signed);
  }

  private async exchangeToken(issuer: string, form: Record<string, string>, clientId: string, chain: Buffer[]): Promise<TokenAnswer> {
    const subjectType = form.subject_token_type;
    if (subjectType !== ACCESS_TOKEN_TYPE && subjectType !== REFRESH_TOKEN_TYPE) throw oauth('invalid_request', `exchange subject type (${subjectType ?? ''}) is not supported`);
    const requested = form.requested_token_type || subjectType;
    if (subjectType === ACCESS_TOKEN_TYPE && requested !== ACCESS_TOKEN_TYPE) throw oauth('invalid_request', 'exchanging an access token for a refresh token is not supported');
    if (requested !== ACCESS_TOKEN_TYPE && requested !== REFRESH_TOKEN_TYPE) throw oauth('invalid_request', `requested token type (${requested}) is not supported`);
    for (const aud of (form.audience ?? '').split(' ').filter(Boolean)) {
      if (!(OIDC_CLIENT_IDS as readonly string[]).includes(aud)) throw oauth('invalid_request', `invalid audience requested [${aud}]`);
    }
    const scopes = (form.scope ?? '').split(' ').filter(Boolean);
    if (scopes.some((s) => !SCOPES.includes(s))) throw oauth('invalid_scope', 'invalid scope requested');
    const grant = await this.subject(form.subject_token, subjectType === ACCESS_TOKEN_TYPE ? 'a' : 'r', null, chain);
    grant.clientId = clientId;
    if (scopes.length > 0) grant.scopes = scopes;
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

/** `uri` with these query parameters appended in order (undefined and empty ones left out). */
export function withParams(uri: string, params: Record<string, string | undefined>): string {
  const q = Object.entries(params)
    .filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '')
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
  if (!q) return uri;
  const hash = uri.indexOf('#');
  const base = hash < 0 ? uri : uri.slice(0, hash);
  return `${base}${base.includes('?') ? '&' : '?'}${q}`;
}
