import { createHash } from 'node:crypto';
import { ApiError } from '@ziti/errors';
import type { Authenticator } from '../domain/authenticator.js';
import type { Mfa } from '../domain/auth-model.js';
import type { MfaManager } from '../domain/mfa/mfa-manager.js';
import { type SecondaryFactorChecker, secondaryChallenge } from '../domain/session-state.js';
import { type AuthRequest, type LoginFacts, matchesSecret, randomId, secretHash } from './auth-requests.js';
import { OIDC_CLIENT_IDS } from './claims.js';
import { type GrantDeps, type TokenAnswer, TokenGrants } from './grants.js';
import { SCOPES, TOKEN_EXCHANGE, oauth, uriAllowed, withParams } from './oauth.js';

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

/**
 * Where a login step leaves its auth request. `ticket`: the one-time secret the callback needs,
 * minted when a step completes the request and handed only to that step's caller. `binding`: the
 * secret of the primary login's caller (later steps that need no factor of the identity ask for it).
 */
export type LoginOutcome = ({ done: true; request: AuthRequest; ticket?: string } | { done: false; request: AuthRequest; queries: AuthQuery[]; totpOpen: boolean; challenge?: string }) & {
  binding?: string;
};

export interface ProviderDeps extends GrantDeps {
  authenticator: Authenticator;
  factors: SecondaryFactorChecker;
  mfa: MfaManager;
}

const sha1Hex = (der: Buffer) => createHash('sha1').update(der).digest('hex');

/**
 * OpenZiti's OIDC provider (OIDC.md): authorization requests, the login steps, codes, the token
 * grants, revocation, end-session and userinfo. HTTP-free: `http.ts` maps requests onto it.
 */
export class OidcProvider {
  private readonly now: () => number;
  private readonly grants: TokenGrants;

  constructor(private readonly d: ProviderDeps) {
    this.now = d.now ?? Date.now;
    this.grants = new TokenGrants(d);
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
    // Only the caller of this login may finish it without a factor of the identity (the binding),
    // and a ticket minted for an earlier login no longer fetches a code.
    const binding = randomId();
    request.binding = secretHash(binding);
    delete request.ticket;
    if (input.configTypes) request.configTypes = [...new Set([...request.configTypes, ...input.configTypes])];
    let challenge: string | undefined;
    const signer = facts.requiredSigner;
    if (signer && !request.amr.includes(`ejs:${signer}`)) {
      const factor = await this.d.factors.check(who.identity, signer, input.bearerTokens);
      if (factor.ok) request.amr.push(`ejs:${signer}`);
      else challenge = secondaryChallenge({ totpPending: false, totpEnrolled: false, extJwt: factor });
    }
    return { ...(await this.settle(request, challenge)), binding };
  }

  /**
   * Stores the request after a login step; when the step completed it, with a new callback ticket
   * (returned, only its hash is stored) for the step's caller.
   */
  private async settle(request: AuthRequest, challenge?: string): Promise<LoginOutcome> {
    const outcome = await this.outcome(request, challenge);
    if (!outcome.done) {
      await this.d.requests.save(request);
      return outcome;
    }
    const ticket = randomId();
    request.ticket = secretHash(ticket);
    await this.d.requests.save(request);
    return { ...outcome, ticket };
  }

  /** Where the request stands: done, or the open secondary factors (read only: no ticket). */
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
    return this.settle(request);
  }

  /**
   * `POST /login/totp/enroll`: a new unverified enrollment of the request's identity. The
   * enrollment steps need the primary login's `binding`: their codes come from the enrollment they
   * create, not from a factor the identity already holds.
   */
  async startTotpEnrollment(id: string | undefined, binding: string | undefined): Promise<{ mfa: Mfa; identityName: string }> {
    const request = await this.boundPrimaryDone(id, binding);
    await this.d.mfa.enroll(request.login!.identityId);
    return { mfa: await this.d.mfa.unverified(request.login!.identityId), identityName: request.login!.identityName };
  }

  /** `DELETE /login/totp/enroll`: drops the enrollment (a verified one needs a code), as `DELETE /current-identity/mfa`. */
  async deleteTotpEnrollment(id: string | undefined, binding: string | undefined, code: string): Promise<void> {
    const request = await this.boundPrimaryDone(id, binding);
    await this.d.mfa.removeOwn(request.login!.identityId, request.apiSessionId, code);
  }

  /** `POST /login/totp/enroll/verify`: verifies the enrollment; it counts as the TOTP factor. */
  async verifyTotpEnrollment(id: string | undefined, binding: string | undefined, code: string): Promise<LoginOutcome> {
    const request = await this.boundPrimaryDone(id, binding);
    await this.d.mfa.verifyForLogin(request.login!.identityId, request.apiSessionId, code);
    request.login!.totpEnrolled = true;
    if (!request.amr.includes('totp')) request.amr.push('totp');
    return this.settle(request);
  }

  private async primaryDone(id: string | undefined): Promise<AuthRequest> {
    const request = await this.request(id);
    if (!request.login) throw ApiError.of('INVALID_AUTH');
    return request;
  }

  /** The request past its primary factor, for the caller of that primary login only (its `binding`). */
  private async boundPrimaryDone(id: string | undefined, binding: string | undefined): Promise<AuthRequest> {
    const request = await this.primaryDone(id);
    if (!matchesSecret(binding, request.binding)) throw ApiError.of('INVALID_AUTH');
    return request;
  }

  /**
   * `/authorize/callback`: the code, for the caller of the login step that completed the request
   * (its one-time `ticket`); a redirect to the client. Without that ticket (an incomplete request,
   * or a caller who only knows the request id): `login_required`, no code.
   */
  async callback(id: string | undefined, ticket: string | undefined): Promise<{ location: string }> {
    const request = await this.request(id);
    const outcome = request.login && matchesSecret(ticket, request.ticket) ? await this.outcome(request) : undefined;
    if (!outcome?.done) return { location: withParams(request.redirectUri, { error: 'login_required', error_description: 'the authentication is not complete', state: request.state }) };
    delete request.ticket;
    await this.d.requests.save(request);
    const code = await this.d.requests.issueCode(request);
    return { location: withParams(request.redirectUri, { code, state: request.state }) };
  }

  /** The token endpoint: see {@link TokenGrants.token}. */
  token(issuer: string, form: Record<string, string>, clientId: string | undefined, clientCertChain: Buffer[]): Promise<TokenAnswer> {
    return this.grants.token(issuer, form, clientId, clientCertChain);
  }

  client(clientId: string | undefined): string {
    return this.grants.client(clientId);
  }

  revoke(token: string | undefined): Promise<void> {
    return this.grants.revoke(token);
  }

  endSession(issuer: string, p: { id_token_hint?: string; post_logout_redirect_uri?: string; state?: string }): Promise<{ location: string }> {
    return this.grants.endSession(issuer, p);
  }

  userinfo(token: string | undefined): Promise<Record<string, unknown> | null> {
    return this.grants.userinfo(token);
  }
}
