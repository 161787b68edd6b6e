import type { ListRequest, Page, PostureCheckResult, ServiceAccess, Session, SessionKey, SessionType } from './model.js';

/** Persistence of sessions (Postgres, schema `session`). */
export interface SessionStore {
  findExisting(apiSessionId: string, serviceId: string, type: SessionType): Promise<Session | null>;
  findById(id: string): Promise<Session | null>;
  /** Inserts unless (apiSessionId, serviceId, type) exists; returns the stored session (new or existing). */
  insertOrGet(session: Session): Promise<Session>;
  /** `identityId` restricts the list to that identity's sessions. */
  list(req: ListRequest, identityId?: string): Promise<Page<Session>>;
  /** Each delete answers the sessions it removed (none when they were gone already). */
  deleteById(id: string): Promise<SessionKey[]>;
  deleteByApiSession(apiSessionId: string): Promise<SessionKey[]>;
  deleteByIdentity(identityId: string): Promise<SessionKey[]>;
  deleteByService(serviceId: string): Promise<SessionKey[]>;
  /** `type` undefined = both types. */
  deleteByIdentityAndService(identityId: string, serviceId: string, type?: SessionType): Promise<SessionKey[]>;
  /** Identities having sessions created under posture checks (for the periodic posture re-check). */
  identitiesWithPostureSessions(): Promise<string[]>;
  /**
   * Runs `fn` if no other replica is running it (a session-level advisory lock); returns whether it ran.
   */
  exclusively(name: string, fn: () => Promise<void>): Promise<boolean>;
  /** `onlyWithPosture`: only the sessions whose creation evaluated posture checks. */
  ofIdentities(identityIds: readonly string[], onlyWithPosture?: boolean): Promise<Session[]>;
}

/** Per-identity service-list change times. */
export interface ServiceUpdateStore {
  /** The identity's lastChangeAt; the first read records `now` as the baseline. */
  get(identityId: string, now: Date): Promise<Date>;
  /** Moves lastChangeAt forward to `at` (never backwards) for each identity. */
  bump(identityIds: readonly string[], at: Date): Promise<void>;
  forget(identityId: string): Promise<void>;
}

/** The policy context (gRPC `PolicyService.GetServiceAccess`). */
export interface PolicyPort {
  serviceAccess(identityId: string, serviceId: string): Promise<ServiceAccess>;
}

/** The posture context (gRPC `PostureService`). */
export interface PosturePort {
  evaluate(identityId: string, apiSessionId: string, checkIds: readonly string[], mfaCompletedAt?: string): Promise<PostureCheckResult[]>;
  recordFailure(req: {
    identityId: string;
    apiSessionId: string;
    serviceId: string;
    serviceName: string;
    sessionType: string;
    policyFailuresJson: string;
  }): Promise<void>;
}

/** Signs session tokens with the controller's key (from pki-enrollment). */
export interface TokenSigner {
  sign(claims: Record<string, unknown>): Promise<string>;
  /** `https://<advertised address>` (the `iss` claim). */
  issuer(): Promise<string>;
}
