import type {
  ApiSession,
  ApiSessionView,
  ApiSessionWithIdentity,
  AuthPolicy,
  Identity,
  IdentityFields,
  IdentityType,
  IdentityView,
  ListRequest,
  Page,
  RoleFilter,
  UpdbAuthenticator,
} from './model.js';

/**
 * The change events of this context, as the domain raises them. The outbox writer (events/) turns
 * them into bus events; API session tokens never leave this service, only their hashes do.
 */
export type DomainEvent =
  | { type: 'identity.created'; identityId: string }
  | { type: 'identity.updated'; identityId: string; tokens: string[] }
  | { type: 'identity.deleted'; identityId: string; tokens: string[] }
  | { type: 'api-session.created'; apiSessionId: string; identityId: string }
  | { type: 'api-session.deleted'; apiSessionId: string; identityId: string; tokens: string[] };

/** The shared principal cache of the gateways: entries of these tokens must go (after commit). */
export interface PrincipalCache {
  drop(tokens: readonly string[]): Promise<void>;
}

/** Repositories usable inside and outside a transaction. */
export interface Repositories {
  identities: IdentityRepository;
  authenticators: AuthenticatorRepository;
  apiSessions: ApiSessionRepository;
  identityTypes: IdentityTypeRepository;
  authPolicies: AuthPolicyRepository;
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
  /** Runs `fn` in one transaction; after a commit that emitted events the outbox relay is nudged. */
  run<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
}

export interface NewIdentity extends IdentityFields {
  id: string;
  isDefaultAdmin: boolean;
}

export interface IdentityRepository {
  findById(id: string): Promise<Identity | null>;
  /** Inside a transaction: reads the identity and locks its row until the transaction ends. */
  findByIdForUpdate(id: string): Promise<Identity | null>;
  view(id: string): Promise<IdentityView | null>;
  list(req: ListRequest, roleFilter?: RoleFilter): Promise<Page<IdentityView>>;
  /** Unique violations become field errors (`name`, `externalId`). */
  create(identity: NewIdentity): Promise<void>;
  update(id: string, fields: IdentityFields): Promise<void>;
  updateInfo(id: string, info: { sdkInfo?: Record<string, unknown>; envInfo?: Record<string, unknown> }): Promise<void>;
  /** Disables the identity (`until` null = until enabled again). */
  disable(id: string, until: Date | null): Promise<void>;
  delete(id: string): Promise<void>;
  findDefaultAdmin(): Promise<Identity | null>;
}

export interface AuthenticatorRepository {
  findUpdbByUsername(username: string): Promise<UpdbAuthenticator | null>;
  /** Unique violation on the username becomes a field error. */
  createUpdb(a: { id: string; identityId: string; username: string; password: string; salt: string }): Promise<void>;
  setFailedAttempts(id: string, count: number): Promise<void>;
}

/** What is left to know of a deleted session: enough for its events and cache entries. */
export interface DeletedSession {
  id: string;
  token: string;
  identityId: string;
}

export interface ApiSessionRepository {
  create(session: ApiSession): Promise<void>;
  findById(id: string): Promise<ApiSession | null>;
  view(id: string): Promise<ApiSessionView | null>;
  findByTokenWithIdentity(token: string): Promise<ApiSessionWithIdentity | null>;
  list(req: ListRequest): Promise<Page<ApiSessionView>>;
  /** Deletes one session; returns it (null when it was already gone). */
  delete(id: string): Promise<DeletedSession | null>;
  /** Deletes every session of an identity; returns them. */
  deleteByIdentity(identityId: string): Promise<DeletedSession[]>;
  /** Tokens of every session of an identity. */
  tokensOfIdentity(identityId: string): Promise<string[]>;
  /** Sets lastActivityAt = now for these sessions. */
  touch(ids: string[], at: Date): Promise<void>;
  /** Deletes up to `max` sessions idle since before `cutoff`; returns them. */
  deleteIdleBefore(cutoff: Date, max: number): Promise<DeletedSession[]>;
}

export interface IdentityTypeRepository {
  findById(id: string): Promise<IdentityType | null>;
  list(req: ListRequest): Promise<Page<IdentityType>>;
}

export interface AuthPolicyRepository {
  findById(id: string): Promise<AuthPolicy | null>;
}
