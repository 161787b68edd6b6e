import { type IdentityPrivilege, isPrivilegedIdentity } from '@ziti/http-kit';
import type { ExternalJwtSigner } from './auth-model.js';
import { type JwtVerifier, type TokenError, extJwtChallenge, identityClaim } from './ext-jwt/jwt-verifier.js';
import type { SecondaryFactors } from './model.js';
import type { Repositories } from './ports.js';

/** The secondary ext-jwt factor of one request: satisfied, or why not (and by which signer). */
export type ExtJwtFactor = { ok: true } | { ok: false; error: TokenError; signer: ExternalJwtSigner | null };

/**
 * Where an API session stands (§2.4): TOTP outstanding, and for policies with a required signer,
 * whether this request carries that signer's token. Partial sessions reach only the `partial` routes.
 */
export interface SessionAuthState {
  totpPending: boolean;
  /** The identity has a verified TOTP enrollment (the auth query's `isTotpEnrolled`). */
  totpEnrolled: boolean;
  /** Absent when the policy requires no signer. */
  extJwt?: ExtJwtFactor;
}

export function isFullyAuthenticated(s: SessionAuthState): boolean {
  return !s.totpPending && (s.extJwt === undefined || s.extJwt.ok);
}

/** The `WWW-Authenticate` value for an unsatisfied secondary ext-jwt factor, if any. */
export function secondaryChallenge(s: SessionAuthState): string | undefined {
  if (!s.extJwt || s.extJwt.ok) return undefined;
  return extJwtChallenge('secondary', s.extJwt.error, s.extJwt.signer ? [s.extJwt.signer] : []);
}

export function totpPending(session: { isMfaRequired: boolean; isMfaComplete: boolean }, secondary: SecondaryFactors): boolean {
  return (session.isMfaRequired || secondary.requireTotp) && !session.isMfaComplete;
}

/** Who a secondary factor is checked for: its claim must name them, and a privileged one needs a signer trusted for admins. */
export type FactorIdentity = { id: string; externalId: string | null } & IdentityPrivilege;

/**
 * Checks the secondary ext-jwt factor: a valid token of the required signer, for this very
 * identity; a signer a non-admin created or changed never satisfies it for a privileged identity.
 */
export class SecondaryFactorChecker {
  constructor(
    private readonly repos: Repositories,
    private readonly verifier: JwtVerifier,
  ) {}

  async check(identity: FactorIdentity, signerId: string, tokens: readonly string[]): Promise<ExtJwtFactor> {
    const signer = await this.repos.signers.findById(signerId);
    if (!signer || !signer.enabled) return { ok: false, error: 'invalid', signer };
    if (!signer.trustedForAdmins && isPrivilegedIdentity(identity)) return { ok: false, error: 'invalid', signer };
    const r = await this.verifier.verifyAny(tokens, [signer]);
    if (!r.ok) return { ok: false, error: r.error, signer };
    const claim = identityClaim(r.claims, signer.claimsProperty);
    const matches = signer.useExternalId ? claim !== null && claim === identity.externalId : claim === identity.id;
    return matches ? { ok: true } : { ok: false, error: 'invalid', signer };
  }

  /** The full state of a session for this request. */
  async state(
    session: { isMfaRequired: boolean; isMfaComplete: boolean; identityId: string },
    identity: FactorIdentity,
    secondary: SecondaryFactors,
    tokens: readonly string[],
  ): Promise<SessionAuthState> {
    const pending = totpPending(session, secondary);
    const totpEnrolled = pending ? (await this.repos.mfas.findByIdentity(session.identityId))?.isVerified === true : false;
    const state: SessionAuthState = { totpPending: pending, totpEnrolled };
    if (secondary.requiredExtJwtSigner) state.extJwt = await this.check(identity, secondary.requiredExtJwtSigner, tokens);
    return state;
  }
}
