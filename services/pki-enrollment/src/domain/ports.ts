import type { ApiSessionCertificate, Ca, Enrollment, IdentityRef, ListRequest, Page, RouterCert } from './model.js';

/** The change events of this context (written to the outbox in the change's transaction). */
export type DomainEvent =
  | { type: 'ca.deleted'; caId: string }
  | { type: 'ca.verified'; caId: string }
  | { type: 'api-session-certificate.created' | 'api-session-certificate.deleted'; certificateId: string; apiSessionId: string; identityId: string };

export interface EnrollmentRepository {
  findById(id: string): Promise<Enrollment | null>;
  findByToken(token: string): Promise<Enrollment | null>;
  /** Inside a transaction: reads the enrollment and locks its row until the transaction ends. */
  lockByToken(token: string): Promise<Enrollment | null>;
  findByIdentity(identityId: string): Promise<Enrollment[]>;
  findByIdentities(identityIds: readonly string[]): Promise<Enrollment[]>;
  findByRouter(routerId: string): Promise<Enrollment | null>;
  list(req: ListRequest, identityId?: string): Promise<Page<Enrollment>>;
  /** A second enrollment of one identity and method fails with 409 ENROLLMENT_EXISTS. */
  create(e: Omit<Enrollment, 'createdAt' | 'updatedAt' | 'tags'>): Promise<void>;
  update(id: string, fields: { token: string; jwt: string; expiresAt: Date }): Promise<void>;
  delete(id: string): Promise<boolean>;
  deleteByIdentity(identityId: string): Promise<number>;
  deleteByRouter(routerId: string): Promise<number>;
}

export interface CaRepository {
  findById(id: string): Promise<Ca | null>;
  findByFingerprint(fingerprint: string): Promise<Ca | null>;
  /** Verified CAs (for authentication and auto-enrollment). */
  listVerified(): Promise<Ca[]>;
  count(): Promise<number>;
  list(req: ListRequest): Promise<Page<Ca>>;
  /** Unique violations become field errors (`name`, `certPem`). */
  create(ca: Omit<Ca, 'createdAt' | 'updatedAt'>): Promise<void>;
  update(ca: Ca): Promise<void>;
  delete(id: string): Promise<boolean>;
}

export interface RouterCertRepository {
  findByRouter(routerId: string): Promise<RouterCert | null>;
  findByFingerprint(fingerprint: string): Promise<RouterCert | null>;
  upsert(cert: Omit<RouterCert, 'updatedAt'>): Promise<void>;
  delete(routerId: string): Promise<boolean>;
}

export interface SessionCertRepository {
  findById(id: string): Promise<ApiSessionCertificate | null>;
  list(req: ListRequest, apiSessionId: string): Promise<Page<ApiSessionCertificate>>;
  create(c: Omit<ApiSessionCertificate, 'createdAt' | 'updatedAt' | 'tags'>): Promise<void>;
  delete(id: string): Promise<boolean>;
  deleteBySession(apiSessionId: string): Promise<number>;
  /** Deletes the session's certificates that expired before `now`; returns how many. */
  deleteExpired(apiSessionId: string, now: Date): Promise<number>;
  countBySession(apiSessionId: string): Promise<number>;
  /** The fingerprints of these sessions' certificates: one row per certificate, by session, oldest first. */
  fingerprintsBySessions(apiSessionIds: readonly string[]): Promise<{ apiSessionId: string; fingerprint: string }[]>;
}

/** Sealed rows of the controller PKI and small settings. */
export interface PkiRepository {
  find(name: string): Promise<{ certPem: string; keySealed: string; sans: string[] } | null>;
  save(name: string, row: { certPem: string; keySealed: string; sans: string[] }): Promise<void>;
  getSetting(key: string): Promise<string | null>;
  setSetting(key: string, value: string): Promise<void>;
}

export interface Repositories {
  enrollments: EnrollmentRepository;
  cas: CaRepository;
  routerCerts: RouterCertRepository;
  sessionCerts: SessionCertRepository;
  pki: PkiRepository;
}

export interface Transaction extends Repositories {
  emit(...events: DomainEvent[]): Promise<void>;
  /** Serialises a critical section across replicas until the transaction ends. */
  lock(name: string): Promise<void>;
}

export interface UnitOfWork {
  readonly repos: Repositories;
  run<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
}

/**
 * identity-auth, as this context needs it (IdentityAuthService over gRPC). Errors are ApiErrors
 * with identity-auth's codes; `NotImplemented` marks an RPC that identity-auth does not serve yet.
 */
export interface IdentityDirectory {
  /** null when the identity does not exist; `'unknown'` when identity-auth can not answer that (RPC not served). */
  getIdentity(id: string): Promise<IdentityRef | null | 'unknown'>;
  /** Several identities at once (those that exist); `'unknown'` when identity-auth can not answer that. */
  getIdentities(ids: readonly string[]): Promise<Map<string, IdentityRef> | 'unknown'>;
  createCertAuthenticator(req: { identityId: string; certPem: string; fingerprint: string; isIssuedByNetwork: boolean; caId?: string }): Promise<{ id: string }>;
  createUpdbAuthenticator(req: { identityId: string; username: string; password: string }): Promise<{ id: string }>;
  createIdentityFromCa(req: {
    name: string;
    roleAttributes: string[];
    caId: string;
    certPem: string;
    fingerprint: string;
    externalId: string;
  }): Promise<IdentityRef>;
  deleteCaAuthenticators(caId: string): Promise<number>;
}
