import { ApiError } from '@ziti/errors';
import { isPrivilegedIdentity } from '@ziti/http-kit';
import { type LoginPrincipal, invalidAuth } from './authenticator.js';
import { commonNameOf, formatCaIdentityName } from './ca-identity.js';
import type { IdentityManager } from './identity-manager.js';
import type { Identity } from './model.js';
import { isDisabled } from './model.js';
import type { ClientCertVerdict, PkiContext } from './pki-context.js';
import type { UnitOfWork } from './ports.js';

/** A certificate login's principal, with the identity's disabled state (checked after the lookup). */
type Found = LoginPrincipal & { disabled: { disabled: boolean; disabledUntil: Date | null } };

/** The authenticator id of a session opened by an `externalId` claim (no authenticator exists), as the controller. */
export const EXTERNAL_ID_AUTHENTICATOR = 'internal';

/**
 * `POST /authenticate?method=cert` (§2.2): the chain the client presented in the TLS handshake
 * (forwarded by the gateway, signed) is verified by pki-enrollment against the first-party roots,
 * then the first-party intermediates (`improperClientCertChain`), then the verified, auth-enabled
 * third-party CAs. The identity is the one of the `externalId` claim when the CA reads one, else
 * the one whose cert authenticator has the leaf's fingerprint; an unknown device of a CA with
 * auto-enrollment gets its identity here. Then the identity must be enabled and its auth policy
 * must allow certificates (and expired ones, for an expired leaf). Every failure is 401 INVALID_AUTH.
 */
export class CertLogin {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly pki: PkiContext,
    private readonly identities: IdentityManager,
  ) {}

  async verify(chain: readonly Buffer[]): Promise<LoginPrincipal> {
    if (chain.length === 0) throw invalidAuth();
    const v = await this.pki.verifyClientCertificate(chain);
    if (!v.verified || (v.ca && v.missingExternalIdClaim)) throw invalidAuth();
    const found = v.ca && v.externalId ? await this.byExternalId(v) : await this.byFingerprint(v);
    if (!found) throw invalidAuth();
    const { disabled, ...who } = found;
    if (isDisabled(disabled) || !who.policy.primaryCertAllowed) throw invalidAuth();
    if (v.isExpired && !who.policy.primaryCertAllowExpiredCerts) throw invalidAuth();
    if (disabled.disabled) await this.identities.enableExpired(); // a lockout that ran out: clear it everywhere
    return who;
  }

  private async byFingerprint(v: ClientCertVerdict): Promise<Found | null> {
    let login = await this.uow.repos.authenticators.findCertLogin(v.fingerprint);
    if (!login && v.ca?.isAutoCaEnrollmentEnabled) {
      await this.autoEnroll(v);
      login = await this.uow.repos.authenticators.findCertLogin(v.fingerprint);
    }
    if (!login) return null;
    const a = login.authenticator;
    // OpenZiti records, for certificates it issued, whether the client presented a chain that
    // resolved to the root (not only with the intermediates the controller holds): written only
    // when it changes.
    const resolvedToRoot = !v.improperClientCertChain;
    const rootChanged = a.isIssuedByNetwork && a.lastAuthResolvedToRoot !== resolvedToRoot;
    return {
      identity: login.identity,
      disabled: login.identity,
      authenticatorId: a.id,
      policy: login.policy,
      mfaVerified: login.mfaVerified,
      cert: {
        improperClientCertChain: v.improperClientCertChain,
        isCertExtendable: a.isIssuedByNetwork,
        isCertExtendRequested: a.isExtendRequested,
        isCertKeyRollRequested: a.isKeyRollRequested,
        ...(rootChanged ? { resolvedToRoot } : {}),
      },
    };
  }

  private async byExternalId(v: ClientCertVerdict): Promise<Found | null> {
    const repos = this.uow.repos;
    let identity: Identity | null = await repos.identities.findByExternalId(v.externalId);
    if (!identity && v.ca?.isAutoCaEnrollmentEnabled) {
      await this.autoEnroll(v);
      identity = await repos.identities.findByExternalId(v.externalId);
    }
    if (!identity) return null;
    // A CA a non-admin created or changed (its key may be theirs) never logs in a privileged identity.
    if (!v.ca?.trustedForAdmins && isPrivilegedIdentity(identity)) return null;
    const policy = await repos.authPolicies.findById(identity.authPolicyId);
    if (!policy) return null;
    const mfa = await repos.mfas.findByIdentity(identity.id);
    return {
      identity,
      disabled: identity,
      authenticatorId: EXTERNAL_ID_AUTHENTICATOR,
      policy,
      mfaVerified: mfa?.isVerified === true,
      cert: { improperClientCertChain: v.improperClientCertChain, isCertExtendable: false, isCertExtendRequested: false, isCertKeyRollRequested: false },
    };
  }

  /** Creates the device's identity; a concurrent login that created it first is not an error. */
  private async autoEnroll(v: ClientCertVerdict): Promise<void> {
    const ca = v.ca!;
    const name = formatCaIdentityName(ca.identityNameFormat, { caName: ca.name, caId: ca.id, commonName: commonNameOf(v.leafPem) });
    try {
      await this.identities.createFromCa({
        name, roleAttributes: ca.identityRoles, caId: ca.id, certPem: v.leafPem, fingerprint: v.fingerprint, externalId: v.externalId, authPolicyId: ca.authPolicyId,
      });
    } catch (err) {
      const raced = err instanceof ApiError && (err.code === 'CERT_IN_USE' || (err.code === 'COULD_NOT_VALIDATE' && err.cause?.field === 'externalId'));
      if (!raced) throw err;
    }
  }
}
