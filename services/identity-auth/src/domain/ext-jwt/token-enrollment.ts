import { ApiError } from '@ziti/errors';
import { isStorableText, normalizeName, shortId } from '@ziti/http-kit';
import type { AuthPolicy, ExternalJwtSigner } from '../auth-model.js';
import type { IdentityManager } from '../identity-manager.js';
import { DEFAULT_AUTH_POLICY_ID } from '../identity-rules.js';
import type { PkiContext } from '../pki-context.js';
import type { Repositories } from '../ports.js';
import { type JwtVerifier, claimAt, identityClaim } from './jwt-verifier.js';

/** The name claim of a signer whose `enrollNameClaimsSelector` is empty (the controller stores `/sub` then). */
export const DEFAULT_ENROLL_NAME_SELECTOR = '/sub';

/** `POST /enroll/token` input: the request's bearer tokens, `ziti-token-issuer-id`, the body's CSR. */
export interface TokenEnrollmentInput {
  /** The `Authorization: Bearer` tokens of the request (at most 3). */
  bearerTokens: string[];
  /** `ziti-token-issuer-id`: only that signer's tokens are considered. */
  issuerId?: string;
  /** A PEM CSR: enroll to a certificate; empty or absent: enroll to token authentication. */
  clientCsr?: string;
}

/** The `enrollmentCerts` answer: the client chain and the CA bundle for a certificate, else nothing. */
export interface TokenEnrollmentResult {
  cert?: string;
  ca?: string;
}

/** What a verified token says about the identity it enrolls. */
export interface EnrollmentClaims {
  /** The signer's identity claim (`claimsProperty`): the new identity's `externalId`, which ext-jwt login looks up. */
  externalId: string;
  name: string;
  roleAttributes: string[];
}

const invalidToken = () => ApiError.of('INVALID_ENROLLMENT_TOKEN');
const notAllowed = () => ApiError.of('INVALID_ENROLLMENT_NOT_ALLOWED');

/** A claim's text when it is a non-empty string a column can hold (a NUL or a lone surrogate can not). */
const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' && isStorableText(v) ? v : null);

/**
 * The identity a verified token describes, or null when the token can not enroll one: no identity
 * claim, no name (absent, null, empty, only white space or not a string), or role attributes that are neither a
 * string nor an array of strings. An absent or null attribute claim means no role attributes; an
 * attribute with a selector prefix (`#`, `@`) is not an attribute and refuses the token too.
 */
export function enrollmentClaims(claims: Record<string, unknown>, signer: ExternalJwtSigner): EnrollmentClaims | null {
  const externalId = identityClaim(claims, signer.claimsProperty);
  // In the form names are stored in: a claim of white space only is no name.
  const name = normalizeName(text(claimAt(claims, signer.enrollNameClaimsSelector || DEFAULT_ENROLL_NAME_SELECTOR)) ?? '');
  const roleAttributes = attributesOf(claims, signer.enrollAttributeClaimsSelector);
  if (!externalId || !name || !roleAttributes) return null;
  return { externalId, name, roleAttributes };
}

function attributesOf(claims: Record<string, unknown>, selector: string): string[] | null {
  if (!selector) return [];
  const v = claimAt(claims, selector);
  if (v === undefined || v === null) return [];
  const values = typeof v === 'string' ? [v] : Array.isArray(v) ? v : null;
  if (!values) return null;
  const out = new Set<string>();
  for (const a of values) {
    if (typeof a !== 'string') return null;
    if (a === '') continue;
    if (!isStorableText(a) || a.startsWith('#') || a.startsWith('@')) return null;
    out.add(a);
  }
  return [...out];
}

/** Whether the enrollment's auth policy lets the new identity log in the way it enrolls. */
function allows(policy: AuthPolicy, signer: ExternalJwtSigner, toCert: boolean): boolean {
  if (toCert) return policy.primaryCertAllowed;
  const signers = policy.primaryExtJwtAllowedSigners;
  return policy.primaryExtJwtAllowed && (signers.length === 0 || signers.includes(signer.id));
}

/**
 * Token enrollment (`POST /enroll/token`, the controller's `EnrollModuleToken`): a bearer token of
 * an enabled external JWT signer, verified as strictly as an ext-jwt login (signature by the
 * signer's certificate or JWKS, `iss`, `aud`, expiry, not-before), creates a Default identity named
 * by the signer's name selector, with the role attributes of its attribute selector, the auth
 * policy `enrollAuthPolicyId` (or `default`) and `externalId` = the token's identity claim. With a
 * CSR (`enrollToCertEnabled`) pki-enrollment signs a certificate and the identity gets a cert
 * authenticator; without (`enrollToTokenEnabled`) it logs in with the signer's tokens from then on.
 *
 * Refusals, in the controller's order: a token that does not verify or lacks an identity claim or
 * a name → 400 INVALID_ENROLLMENT_TOKEN; an identity with that externalId → 409
 * ENROLLMENT_IDENTITY_ALREADY_ENROLLED; the signer or the auth policy not allowing the mode →
 * 409 INVALID_ENROLLMENT_NOT_ALLOWED; a CSR that does not parse → 400 COULD_NOT_PROCESS_CSR.
 * Nothing is written before every check passed.
 */
export class TokenEnrollment {
  constructor(
    private readonly repos: Repositories,
    private readonly verifier: JwtVerifier,
    private readonly identities: IdentityManager,
    private readonly pki: Pick<PkiContext, 'signIdentityCsr'>,
  ) {}

  async enroll(input: TokenEnrollmentInput): Promise<TokenEnrollmentResult> {
    const { signer, claims } = await this.verify(input);
    const claimed = enrollmentClaims(claims, signer);
    if (!claimed) throw invalidToken();
    if (await this.repos.identities.findByExternalId(claimed.externalId)) throw ApiError.of('ENROLLMENT_IDENTITY_ALREADY_ENROLLED');
    const csr = input.clientCsr ?? '';
    const toCert = csr !== '';
    if (!(toCert ? signer.enrollToCertEnabled : signer.enrollToTokenEnabled)) throw notAllowed();
    const authPolicyId = signer.enrollAuthPolicyId || DEFAULT_AUTH_POLICY_ID;
    const policy = await this.repos.authPolicies.findById(authPolicyId);
    if (!policy || !allows(policy, signer, toCert)) throw notAllowed();
    const id = shortId();
    const signed = toCert ? await this.pki.signIdentityCsr(id, csr) : undefined;
    await this.identities.createFromToken({
      id,
      ...claimed,
      authPolicyId,
      cert: signed ? { certPem: signed.chainPem, fingerprint: signed.fingerprint } : null,
    });
    return signed ? { cert: signed.chainPem, ca: signed.caBundlePem } : {};
  }

  /** The first bearer token that verifies against the enabled signers (or the one `issuerId` names). */
  private async verify(input: TokenEnrollmentInput): Promise<{ signer: ExternalJwtSigner; claims: Record<string, unknown> }> {
    if (input.bearerTokens.length === 0) throw invalidToken();
    let signers: ExternalJwtSigner[];
    if (input.issuerId !== undefined) {
      const one = isStorableText(input.issuerId) ? await this.repos.signers.findById(input.issuerId) : null;
      signers = one?.enabled ? [one] : [];
    } else {
      signers = await this.repos.signers.enabled();
    }
    if (signers.length === 0) throw invalidToken();
    const r = await this.verifier.verifyAny(input.bearerTokens, signers);
    if (!r.ok) throw invalidToken();
    return r;
  }
}
