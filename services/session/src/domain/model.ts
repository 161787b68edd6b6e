/** Entities of the session context. */

export type SessionType = 'Dial' | 'Bind';

/** An edge router offered with a session (`sessionEdgeRouter`). */
export interface SessionEdgeRouter {
  name: string;
  hostname: string;
  isOnline: boolean;
  urls: Record<string, string>;
  supportedProtocols: Record<string, string>;
  syncStatus: string;
  cost: number;
  noTraversal: boolean;
  disabled: boolean;
}

export interface Session {
  id: string;
  /** The session token handed out at creation: a JWT (§6.4). */
  token: string;
  apiSessionId: string;
  identityId: string;
  serviceId: string;
  serviceName: string;
  type: SessionType;
  tags: Record<string, unknown>;
  edgeRouters: SessionEdgeRouter[];
  /** The service policies whose posture passed when the session was created. */
  servicePolicyIds: string[];
  /** The posture checks evaluated at creation (empty: none applied). */
  postureCheckIds: string[];
  createdAt: Date;
  updatedAt: Date;
}

/** What names a session in its events: the rows a delete removed. */
export type SessionKey = Pick<Session, 'id' | 'apiSessionId' | 'identityId' | 'serviceId' | 'type'>;

/** What the policy context answers about (identity, service) (proto `ServiceAccess`). */
export interface ServiceAccess {
  visible: boolean;
  serviceName: string;
  permissions: string[];
  policies: { policyId: string; policyType: string; postureCheckIds: string[] }[];
  edgeRouters: SessionEdgeRouter[];
}

/** One evaluated posture check (proto `PostureCheckResult`, the parts sessions need). */
export interface PostureCheckResult {
  id: string;
  typeId: string;
  isPassing: boolean;
}

/** The caller of a request, as the session context needs it. */
export interface Caller {
  identityId: string;
  apiSessionId: string;
  isAdmin: boolean;
  /** When the API session completed MFA (RFC 3339), when identity-auth says so. */
  mfaCompletedAt?: string;
}

export interface ListRequest {
  filter?: string;
  limit?: string;
  offset?: string;
  sort?: string;
}

export interface Page<T> {
  items: T[];
  totalCount: number;
  limit: number;
  offset: number;
  filterableFields: string[];
}

/** What the router control plane needs of a session (`SessionService.GetSessions`). */
export interface SessionFacts {
  id: string;
  apiSessionId: string;
  identityId: string;
  serviceId: string;
  type: SessionType;
}
