import type { ListRequest, Page, PostureCheck, PostureCheckTypeRecord, RoleFilter } from './model.js';
import type { PostureData } from './posture-data.js';

/** Persistence of posture checks (Postgres, schema `posture`). */
export interface PostureCheckStore {
  findById(id: string): Promise<PostureCheck | null>;
  findByIds(ids: readonly string[]): Promise<PostureCheck[]>;
  list(req: ListRequest, roleFilter?: RoleFilter): Promise<Page<PostureCheck>>;
  /** Whether any posture check exists at all. */
  any(): Promise<boolean>;
  /** MFA checks with promptOnWake or promptOnUnlock. */
  mfaPromptChecks(): Promise<PostureCheck[]>;
  /**
   * Writes in one transaction with the outbox events; unique violations on the name become the
   * field error `name must be unique`.
   */
  create(check: PostureCheck, events: PostureCheckEvent[]): Promise<void>;
  /** Optimistic update: fails with NOT_FOUND when the check vanished. */
  update(check: PostureCheck, events: PostureCheckEvent[]): Promise<void>;
  delete(id: string, events: (deleted: PostureCheck) => PostureCheckEvent[]): Promise<PostureCheck | null>;
  /** Role attributes declared by posture checks, with ZitiQL over `id` (the attribute). */
  roleAttributes(req: ListRequest, extra?: readonly string[], withLimits?: boolean): Promise<Page<string>>;
  /** How many posture checks declare each attribute, with their ids. */
  attributeOwners(attributes: readonly string[]): Promise<Map<string, string[]>>;
  listTypes(req: ListRequest): Promise<Page<PostureCheckTypeRecord>>;
  findType(id: string): Promise<PostureCheckTypeRecord | null>;
}

/**
 * A change event of a posture check, published through the outbox (subject
 * `ziti.events.posture.<type>`). Example:
 * `{ "type": "posture-check.updated", "data": { "postureCheckId": "x1", "name": "os-check",
 *    "typeId": "OS", "roleAttributes": ["laptops"], "updatedAt": "2026-11-22T10:00:00.000Z",
 *    "version": 2, "createdAt": "…", "detail": { …postureCheckDetail… } } }`
 * `posture-check.deleted` carries the same fields of the deleted check and `deleted: true`.
 */
export interface PostureCheckEvent {
  type: 'posture-check.created' | 'posture-check.updated' | 'posture-check.deleted';
  data: Record<string, unknown>;
}

/** The identity's volatile posture state (shared cache). Writers serialise per identity. */
export interface PostureDataStore {
  get(identityId: string): Promise<PostureData>;
  /** Read-modify-write; `fn` returns the new data, or null to leave it alone. */
  update<T>(identityId: string, fn: (current: PostureData) => { data: PostureData | null; result: T }): Promise<T>;
  drop(identityId: string): Promise<void>;
  /** Failed service requests (most recent last), at most `max` kept. */
  failedRequests(identityId: string): Promise<Record<string, unknown>[]>;
  addFailedRequest(identityId: string, entry: Record<string, unknown>, max: number): Promise<void>;
}

/** The policy context, as the posture context needs it. */
export interface PolicyPort {
  /** Synchronous projection update after a committed change (the outbox event converges it otherwise). */
  syncPostureCheck(check: PostureCheck | null, id: string, detail?: Record<string, unknown>): Promise<void>;
  /**
   * Service policies referencing posture check attributes (`#attr`), per attribute. An empty
   * `attributes` asks for every attribute some policy references.
   */
  attributeUsage(attributes: readonly string[], withIds: boolean): Promise<Map<string, { count: number; ids: string[] }>>;
  /**
   * Services reachable by the identity through service policies that use these posture checks,
   * each with the given checks its policies use (policy `ListPostureCheckServices`).
   */
  servicesOfChecks(identityId: string, checkIds: readonly string[]): Promise<{ id: string; name: string; checkIds: string[] }[]>;
}

/** Change events of an identity's posture data (bus, via the outbox): `posture-data.changed {identityId}`. */
export interface PostureDataEvents {
  changed(identityId: string): Promise<void>;
}
