import type { ControllerSettingRepository, OidcSettings } from './controller-settings.js';
import type { RequestPrincipal } from '@ziti/http-kit';
import type {
  AuthPolicy,
  AuthPolicyFields,
  AuthenticatorView,
  CertLogin,
  ExternalJwtSigner,
  ExternalJwtSignerFields,
  SignerCertFacts,
  UpdbLogin,
} from './auth-model.js';
import type { RevocableToken, RevocationType } from '../oidc/ports.js';
import type {
  ApiSession,
  CompletedMfa,
  ApiSessionKind,
  ApiSessionView,
  ApiSessionWithIdentity,
  Identity,
  IdentityFields,
  IdentityType,
  IdentityView,
  ListRequest,
  Page,
  RoleFilter,
  IdentityTrace,
} from './model.js';

/** The slice of an identity other contexts project (policy keeps it; events carry it). */
export interface IdentityProjection {
  id: string;
  name: string;
  roleAttributes: string[];
  isAdmin: boolean;
  disabled: boolean;
  updatedAt: Date;
  /** For the identity association lists other contexts render. */
  typeId: string;
  isDefaultAdmin: boolean;
  externalId: string | null;
  authPolicyId: string;
  createdAt: Date;
  tags: Record<string, unknown>;
  /** For the router data model (policy keeps them for the routers). */
  defaultHostingPrecedence: string;
  defaultHostingCost: number;
  serviceHostingPrecedences: Record<string, string>;
  serviceHostingCosts: Record<string, number>;
  appData: Record<string, unknown>;
}

/**
 * The change events of this context, as the domain raises them. The outbox writer (events/) turns
 * them into bus events; API session tokens never leave this service on the bus, only their hashes
 * do (`api-session.created` carries ids alone).
 */
export type DomainEvent =
  | { type: 'identity.created'; identity: IdentityProjection }
  | { type: 'identity.updated' | 'identity.disabled'; identity: IdentityProjection; tokens: string[] }
  | { type: 'identity.deleted'; identity: IdentityProjection; tokens: string[] }
  | { type: 'api-session.created'; apiSessionId: string; identityId: string }
  | { type: 'api-session.updated'; apiSessionId: string; identityId: string; tokens: string[] }
  | { type: 'api-session.deleted'; apiSessionId: string; identityId: string; tokens: string[] }
  | { type: 'auth-policy.created' | 'auth-policy.updated' | 'auth-policy.deleted'; authPolicyId: string; tokens: string[] }
  | { type: 'controller-settings.updated'; settingId: string; change: 'created' | 'updated' | 'deleted'; oidc: OidcSettings | null }
  | { type: 'revocation.created'; revocationId: string; revocationType: string };

/** The shared principal cache of the gateways: entries of these tokens must go (after commit). */
export interface PrincipalCache {
  drop(tokens: readonly string[]): Promise<void>;
  /**
   * Starts a new principal generation of these identities (`principalGenerationKey`), after a
   * committed change their principals show: every gateway then re-resolves the bearer principals
   * it cached for them (those are keyed by access tokens identity-auth does not keep). Best effort.
   */
  renew(identityIds: readonly string[]): Promise<void>;
  /** Caches a session's principal for the gateway (best effort: a failure is logged, not thrown). */
  put(token: string, principal: RequestPrincipal, ttlSeconds: number): Promise<void>;
}


/** Usage of one role attribute by the policies of the policy context. */
export interface PolicyUsage {
  servicePolicies: string[] | number;
  edgeRouterPolicies: string[] | number;
}

/**
 * The policy context as identity-auth needs it: the synchronous identity projection and the role
 * attribute usage. Implementations never throw for an unreachable policy service.
 */
export interface PolicyContext {
  /** Pushes the identity's projection; false when it could not (the outbox event converges it). */
  syncIdentity(identity: IdentityProjection, deleted: boolean): Promise<boolean>;
  /**
   * How policies use identity role attributes: every attribute policies reference when `attributes`
   * is empty, else those given. Null when the policy service is unavailable or does not serve it.
   */
  roleAttributeUsage(attributes: string[], withIds: boolean): Promise<Map<string, PolicyUsage> | null>;
}

/** Repositories usable inside and outside a transaction. */
export interface Repositories {
  identities: IdentityRepository;
  authenticators: AuthenticatorRepository;
  apiSessions: ApiSessionRepository;
  identityTypes: IdentityTypeRepository;
  authPolicies: AuthPolicyRepository;
  signers: ExternalJwtSignerRepository;
  mfas: MfaRepository;
  controllerSettings: ControllerSettingRepository;
  revocations: RevocationRepository;
}

/** One transaction: the repositories bound to it, plus the outbox. */
export interface Transaction extends Repositories {
  /** Writes an event into the outbox, committed (or rolled back) with the transaction. */
  emit(...events: DomainEvent[]): Promise<void>;
  /** Serialises a critical section across replicas until the transaction ends. */
  lock(name: string): Promise<void>;
}

export interface UnitOfWork {
  readonly repos: Repositories;
  /** Runs `fn` in one transaction; the events it emitted are published once it has committed (outbox relay). */
  run<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  /**
   * The login hot path in one atomic statement: the new session and the identity's reported
   * sdkInfo/envInfo (when changed), and, for a legacy session that is fully authenticated (no
   * TOTP pending), its `api-session.created` outbox row (published on commit, for the router
   * control plane). An identity deleted meanwhile → 401 INVALID_AUTH. When the
   * identity would hold more sessions than its bound, the same statement ends its least recently
   * active ones (`api-session.deleted` each; their cached principals are dropped before this
   * resolves).
   */
  createSession(
    session: ApiSession,
    info: { sdkInfo?: Record<string, unknown>; envInfo?: Record<string, unknown> },
    /** The session's certificate authenticator's new `lastAuthResolvedToRoot`, when it changed. */
    resolvedToRoot?: boolean,
  ): Promise<void>;
}

export interface NewIdentity extends IdentityFields {
  id: string;
  isDefaultAdmin: boolean;
}

export interface IdentityRepository {
  findById(id: string): Promise<Identity | null>;
  /** Inside a transaction: reads the identity and locks its row until the transaction ends. */
  findByIdForUpdate(id: string): Promise<Identity | null>;
  findByExternalId(externalId: string): Promise<Identity | null>;
  /** Whether an identity has this name. */
  nameTaken(name: string): Promise<boolean>;
  view(id: string): Promise<IdentityView | null>;
  /** The views of these identities, in the order of `ids`; unknown ids are left out. */
  views(ids: readonly string[]): Promise<IdentityView[]>;
  list(req: ListRequest, roleFilter?: RoleFilter): Promise<Page<IdentityView>>;
  /** Unique violations become field errors (`name`, `externalId`). */
  create(identity: NewIdentity): Promise<void>;
  update(id: string, fields: IdentityFields): Promise<Identity>;
  /** Sets or clears the identity's trace (`updatedAt` stays); false when it does not exist. */
  setTrace(id: string, trace: IdentityTrace | null): Promise<boolean>;
  updateInfo(id: string, info: { sdkInfo?: Record<string, unknown>; envInfo?: Record<string, unknown> }): Promise<void>;
  /**
   * Disables the identity now for `minutes` (null = until enabled again); `disabledUntil` is
   * `disabledAt` plus the duration, from one clock reading. Returns the identity.
   */
  disable(id: string, minutes: number | null): Promise<Identity>;
  /** Clears the disabled state; returns the identity. */
  enable(id: string): Promise<Identity>;
  /** Clears the disabled state of up to `max` identities whose `disabledUntil` has passed; returns them. */
  enableExpired(now: Date, max: number): Promise<Identity[]>;
  delete(id: string): Promise<void>;
  findDefaultAdmin(): Promise<Identity | null>;
  /** Ids of identities using the auth policy (at most `max`). */
  idsWithAuthPolicy(authPolicyId: string, max: number): Promise<string[]>;
  /** The distinct role attributes of all identities, plus `extra`, as a list (filter over `id`, §4.1). */
  listRoleAttributes(req: ListRequest, extra?: string[]): Promise<Page<string>>;
  /** For each attribute, the ids of the identities that carry it. */
  idsByRoleAttribute(attributes: string[]): Promise<Map<string, string[]>>;
}

export interface NewAuthenticator {
  id: string;
  identityId: string;
  method: 'updb' | 'cert';
  username?: string;
  password?: string;
  salt?: string;
  certPem?: string;
  fingerprint?: string;
  /** Issued by the controller PKI (extendable); false for certificates of third-party CAs. */
  isIssuedByNetwork?: boolean;
  /** The third-party CA that issued the certificate (its authenticators go when it is deleted). */
  caId?: string | null;
  tags: Record<string, unknown>;
}

/** The stored facts of one authenticator (hash included: domain use only, never on the wire). */
export interface StoredAuthenticator {
  id: string;
  identityId: string;
  method: string;
  username: string | null;
  password: string | null;
  salt: string | null;
  fingerprint: string | null;
  certPem: string | null;
  isIssuedByNetwork: boolean;
  caId: string | null;
  isExtendRequested: boolean;
  isKeyRollRequested: boolean;
  /** The certificate `extend` issued, waiting for `extend-verify`. */
  unverifiedCertPem: string | null;
  unverifiedFingerprint: string | null;
  tags: Record<string, unknown>;
}

export interface AuthenticatorRepository {
  /** The updb credential of a username with its identity state and auth policy, in one read. */
  findUpdbLogin(username: string): Promise<UpdbLogin | null>;
  /** The cert authenticator of a fingerprint with its identity state and auth policy, in one read. */
  findCertLogin(fingerprint: string): Promise<CertLogin | null>;
  find(id: string): Promise<StoredAuthenticator | null>;
  view(id: string): Promise<AuthenticatorView | null>;
  /** `identityId` restricts the list to one identity (self-service). */
  list(req: ListRequest, identityId?: string): Promise<Page<AuthenticatorView>>;
  listOfIdentity(identityId: string): Promise<AuthenticatorView[]>;
  /**
   * Unique violations: username → field error, fingerprint → 409 CERT_IN_USE, a second authenticator
   * of the method for the identity → 409 MAX_AUTHENTICATOR_METHODS_REACHED.
   */
  create(a: NewAuthenticator): Promise<void>;
  update(id: string, change: { username?: string; password?: string; salt?: string; tags?: Record<string, unknown> }): Promise<void>;
  delete(id: string): Promise<boolean>;
  /** Inside a transaction: reads the authenticator and locks its row until the transaction ends. */
  findForUpdate(id: string): Promise<StoredAuthenticator | null>;
  /** The identity's cert authenticators. */
  certsOfIdentity(identityId: string): Promise<StoredAuthenticator[]>;
  /** Flags cert authenticators for early extension (and key rolling when `rollKeys`). */
  requestExtend(ids: string[], rollKeys: boolean, at: Date): Promise<void>;
  /** Keeps the certificate `extend` issued as pending (it does not authenticate yet). */
  setPendingCert(id: string, certPem: string, fingerprint: string): Promise<void>;
  /**
   * The pending certificate becomes the authenticator's (the old fingerprint stops authenticating);
   * the extend flags are cleared. A fingerprint already in use → 409 CERT_IN_USE.
   */
  promotePendingCert(id: string, rolledKeys: boolean): Promise<void>;
  /** Deletes the cert authenticators of a third-party CA; returns how many. */
  deleteByCa(caId: string): Promise<number>;
  /** Adds one failed attempt atomically; returns the new count. */
  countFailure(id: string): Promise<number>;
  setFailedAttempts(id: string, count: number): Promise<void>;
}

/** What is left to know of a deleted session: enough for its events, cache entries and revocation. */
export interface DeletedSession {
  id: string;
  token: string;
  identityId: string;
  kind: ApiSessionKind;
}

export interface ApiSessionRepository {
  create(session: ApiSession): Promise<void>;
  findById(id: string): Promise<ApiSession | null>;
  view(id: string): Promise<ApiSessionView | null>;
  findByTokenWithIdentity(token: string): Promise<ApiSessionWithIdentity | null>;
  findByIdWithIdentity(id: string): Promise<ApiSessionWithIdentity | null>;
  list(req: ListRequest): Promise<Page<ApiSessionView>>;
  /**
   * Marks the second factor done (isMfaRequired and isMfaComplete); returns the session's token,
   * whether its TOTP was pending until now (by its own flag or its identity's auth policy) and its
   * kind, or null when the session is gone or (with `maxAgeSeconds`) was created longer ago than that.
   */
  completeMfa(id: string, maxAgeSeconds?: number): Promise<CompletedMfa | null>;
  /** Moves an unexpired OIDC session's end to `expiresAt`; false when it is gone, expired or not OIDC. */
  extendOidc(id: string, expiresAt: Date): Promise<boolean>;
  /** Sets the session's `mfaCompletedAt` (a TOTP token was issued); returns its token, or null when it is gone. */
  setMfaCompletedAt(id: string, at: Date): Promise<string | null>;
  /** Deletes one session; returns it (null when it was already gone). */
  delete(id: string): Promise<DeletedSession | null>;
  /** Deletes every session of an identity (but `exceptId`, when given); returns them. */
  deleteByIdentity(identityId: string, exceptId?: string): Promise<DeletedSession[]>;
  /** Tokens of every session of an identity. */
  tokensOfIdentity(identityId: string): Promise<string[]>;
  /** Tokens of every session of the identities using an auth policy. */
  tokensOfAuthPolicy(authPolicyId: string): Promise<string[]>;
  /** Sets lastActivityAt = now for these sessions. */
  touch(ids: string[], at: Date): Promise<void>;
  /** Deletes up to `max` legacy sessions idle since before `cutoff` (OIDC sessions have no idle timeout); returns them. */
  deleteIdleBefore(cutoff: Date, max: number): Promise<DeletedSession[]>;
  /** Deletes up to `max` OIDC sessions whose `expiresAt` is before `now`; returns them. */
  deleteExpiredOidc(now: Date, max: number): Promise<DeletedSession[]>;
}

/** A stored revocation (OIDC.md "Revocations"). */
export interface Revocation {
  id: string;
  type: RevocationType;
  expiresAt: Date;
  /** IDENTITY: tokens issued before this instant are revoked. */
  issuedBefore: Date | null;
  tags: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

export interface RevocationRepository {
  /** Creates the revocation, or replaces the one of the same id (every field fresh, `createdAt` too); returns it. */
  put(r: Pick<Revocation, 'id' | 'type' | 'expiresAt' | 'issuedBefore' | 'tags'>): Promise<Revocation>;
  find(id: string): Promise<Revocation | null>;
  list(req: ListRequest): Promise<Page<Revocation>>;
  /** One statement: a JTI revocation of `jti`, an API_SESSION one of `z_asid`, or an IDENTITY one of `sub` after `iat`. */
  isRevoked(token: RevocableToken): Promise<boolean>;
  /** Revocations live at `now`: those of `ids`, or else the next `limit` after `afterId`; in id order. */
  listLive(ids: readonly string[] | undefined, afterId: string, limit: number, now: Date): Promise<Revocation[]>;
  /** Deletes up to `max` revocations that expired before `now`; how many. */
  deleteExpired(now: Date, max: number): Promise<number>;
}

/**
 * Revocations written in the transaction of their cause (an identity disabled or deleted, an OIDC
 * session ended); their Redis markers are set once it committed (`oidc/revocations.ts`).
 */
export interface RevocationWriter {
  /** Creates or replaces the revocation inside `tx` (expiry: now + the longest token lifetime; cutoff: now). */
  revokeIn(tx: Transaction, type: RevocationType, id: string): Promise<Revocation>;
  /** Sets the markers of committed revocations (best effort: a failure is logged, not thrown). */
  mark(revocations: readonly Revocation[]): Promise<void>;
}

export interface IdentityTypeRepository {
  findById(id: string): Promise<IdentityType | null>;
  list(req: ListRequest): Promise<Page<IdentityType>>;
}

export interface AuthPolicyRepository {
  findById(id: string): Promise<AuthPolicy | null>;
  list(req: ListRequest): Promise<Page<AuthPolicy>>;
  /** Unique violation on the name becomes a field error. */
  create(id: string, fields: AuthPolicyFields): Promise<void>;
  update(id: string, fields: AuthPolicyFields): Promise<void>;
  delete(id: string): Promise<void>;
  /** Ids of policies naming the signer as allowed primary or required secondary signer. */
  idsReferencingSigner(signerId: string): Promise<string[]>;
}

export interface ExternalJwtSignerRepository {
  findById(id: string): Promise<ExternalJwtSigner | null>;
  list(req: ListRequest, enabledOnly?: boolean): Promise<Page<ExternalJwtSigner>>;
  /** Every enabled signer (few: they are read per ext-jwt authentication). */
  enabled(): Promise<ExternalJwtSigner[]>;
  /** Which of these ids exist. */
  existing(ids: string[]): Promise<string[]>;
  /** Unique violations (name, issuer, kid, fingerprint) become field errors. `trustedForAdmins`: an admin writes it. */
  create(id: string, fields: ExternalJwtSignerFields, cert: SignerCertFacts, trustedForAdmins: boolean): Promise<void>;
  update(id: string, fields: ExternalJwtSignerFields, cert: SignerCertFacts, trustedForAdmins: boolean): Promise<void>;
  delete(id: string): Promise<void>;
}

/** A stored TOTP enrollment: `secret` and `recoveryCodes` are sealed (see domain/mfa/secret-box). */
export interface StoredMfa {
  id: string;
  identityId: string;
  isVerified: boolean;
  secret: string;
  recoveryCodes: string;
  tags: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

export interface MfaRepository {
  findByIdentity(identityId: string): Promise<StoredMfa | null>;
  /** Inside a transaction: locks the enrollment row until the transaction ends. */
  findByIdentityForUpdate(identityId: string): Promise<StoredMfa | null>;
  /** A second enrollment of an identity → 409 MFA_EXISTS. */
  create(mfa: Omit<StoredMfa, 'createdAt' | 'updatedAt'>): Promise<void>;
  update(id: string, change: { isVerified?: boolean; recoveryCodes?: string }): Promise<void>;
  deleteByIdentity(identityId: string): Promise<boolean>;
}

/**
 * Shared state of MFA codes (domain/mfa/mfa-guard), on every replica: the shared cache. A failure
 * of the cache is a 503, never a code accepted without the check.
 */
export interface MfaGuardStore {
  /** Claims a TOTP time step of an identity; true only for the first claim within `ttlSeconds`. */
  claimStep(identityId: string, step: number, ttlSeconds: number): Promise<boolean>;
  /** Counts one code sent by an API session and answers the count (the first one starts a `ttlSeconds` window). */
  countAttempt(apiSessionId: string, ttlSeconds: number): Promise<number>;
  /** Forgets the session's count (after an accepted code). */
  clearAttempts(apiSessionId: string): Promise<void>;
}

/**
 * Checks a URL the controller will fetch later (clients/outbound-url `OutboundGuard.checkUrl`):
 * 400 COULD_NOT_VALIDATE on `field` when it points at an address outbound requests may not reach.
 */
export type OutboundUrlCheck = (field: string, url: string) => Promise<unknown>;
