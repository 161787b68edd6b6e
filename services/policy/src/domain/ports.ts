import type { Selector } from './roles.js';
import type {
  Config,
  ConfigTarget,
  ConfigType,
  IdentityRecord,
  ListRequest,
  Page,
  PolicyType,
  PostureCheckRecord,
  Router,
  RouterKind,
  Service,
  Terminator,
  RouterLiveState,
} from './model.js';

/**
 * What narrows a list to the entities associated with another one (association lists, the
 * client's own services, roleFilter). Stores turn it into SQL.
 */
export type ListScope =
  | { of: 'linked'; link: LinkName; ownerId: string }
  | { of: 'identity-services' | 'service-identities'; id: string; policyType?: PolicyType }
  | { of: 'role-filter'; selector: Selector }
  | { of: 'all-of'; scopes: ListScope[] };

/**
 * Named associations: `<owner>-<listed>`. E.g. `sp-identities` lists the identities of a service
 * policy; `identity-sps` the service policies of an identity.
 */
export type LinkName =
  | 'sp-identities' | 'sp-services' | 'sp-posture-checks' | 'erp-identities' | 'erp-edge-routers' | 'serp-services' | 'serp-edge-routers'
  | 'identity-sps' | 'identity-erps' | 'service-sps' | 'service-serps' | 'router-erps' | 'router-serps'
  | 'identity-edge-routers' | 'service-edge-routers' | 'router-identities' | 'router-services'
  | 'config-services' | 'service-configs' | 'config-type-configs' | 'service-terminators';

export interface NewConfigType {
  id: string;
  name: string;
  schema: Record<string, unknown>;
  target: ConfigTarget;
  tags: Record<string, unknown>;
}

export interface ConfigTypeRepository {
  find(id: string): Promise<ConfigType | null>;
  findMany(ids: readonly string[]): Promise<ConfigType[]>;
  findByNames(names: readonly string[]): Promise<ConfigType[]>;
  list(req: ListRequest, scope?: ListScope): Promise<Page<ConfigType>>;
  create(t: NewConfigType): Promise<void>;
  ensure(types: readonly NewConfigType[]): Promise<void>;
  update(id: string, t: Omit<NewConfigType, 'id'>): Promise<void>;
  configIds(id: string): Promise<string[]>;
  delete(id: string): Promise<void>;
}

export interface NewConfig {
  id: string;
  name: string;
  configTypeId: string;
  data: Record<string, unknown>;
  tags: Record<string, unknown>;
}

export interface ConfigRepository {
  find(id: string): Promise<Config | null>;
  findMany(ids: readonly string[]): Promise<Config[]>;
  list(req: ListRequest, scope?: ListScope): Promise<Page<Config>>;
  create(c: NewConfig): Promise<void>;
  update(id: string, c: { name: string; data: Record<string, unknown>; tags: Record<string, unknown> }): Promise<void>;
  delete(id: string): Promise<void>;
  users(id: string): Promise<{ serviceIds: string[]; overrideIdentityIds: string[] }>;
}

export interface NewService {
  id: string;
  name: string;
  roleAttributes: string[];
  encryptionRequired: boolean;
  maxIdleTimeMillis: number;
  terminatorStrategy: string;
  tags: Record<string, unknown>;
  configs: { id: string; typeId: string }[];
}

/** A service whose caller-independent `serviceDetail` fields are already rendered as a JSON object text. */
export interface RenderedService {
  id: string;
  json: string;
}

export interface ServiceRepository {
  /** The hot path of the client service list: rows rendered by the database. */
  listRendered(req: ListRequest, scope?: ListScope): Promise<Page<RenderedService>>;
  find(id: string): Promise<Service | null>;
  findForUpdate(id: string): Promise<Service | null>;
  findMany(ids: readonly string[]): Promise<Service[]>;
  list(req: ListRequest, scope?: ListScope): Promise<Page<Service>>;
  create(s: NewService): Promise<void>;
  update(s: NewService): Promise<void>;
  delete(id: string): Promise<void>;
  identitiesWithAccess(id: string): Promise<string[]>;
}

export type NewRouter = Omit<Router, 'createdAt' | 'updatedAt'>;

export interface RouterRepository {
  find(id: string): Promise<Router | null>;
  findMany(ids: readonly string[]): Promise<Router[]>;
  list(view: 'edge' | 'transit' | 'all', req: ListRequest, scope?: ListScope): Promise<Page<Router>>;
  save(r: NewRouter, isNew: boolean): Promise<void>;
  delete(id: string): Promise<void>;
}

export type NewTerminator = Omit<Terminator, 'createdAt' | 'updatedAt' | 'serviceName' | 'routerName'> & {
  /** Written when given (never read back by the API); null keeps the stored one. */
  instanceSecret?: string | null;
};

export interface TerminatorRepository {
  find(id: string): Promise<Terminator | null>;
  findMany(ids: readonly string[]): Promise<Terminator[]>;
  list(req: ListRequest, scope?: ListScope): Promise<Page<Terminator>>;
  save(t: NewTerminator, isNew: boolean): Promise<void>;
  delete(id: string): Promise<void>;
  /** Inserts unless the id exists (one statement); true when it inserted. A service or router that is gone is a NOT_FOUND. */
  insertIfAbsent(t: NewTerminator): Promise<boolean>;
  /** Sets cost and/or precedence of a terminator of that router; the updated row, or null when there is none. */
  updateOnRouter(id: string, routerId: string, change: { cost?: number; precedence?: string }): Promise<Terminator | null>;
  /** Deletes the router's terminators with these ids, or (allEdge) every edge-binding one of it; the ids deleted. */
  removeOnRouter(routerId: string, ids: readonly string[], allEdge: boolean): Promise<string[]>;
  /** Every terminator of a service. */
  ofService(serviceId: string): Promise<Terminator[]>;
}

/**
 * The router control plane (fabric): routers' live state and closing a router's control channel.
 * Both never throw: an unreachable or not (yet) serving fabric renders routers offline and skips the disconnect.
 */
export interface RouterStates {
  /** The state of each id fabric reports (one call); ids it does not report are absent. */
  get(ids: readonly string[]): Promise<Map<string, RouterLiveState>>;
  disconnect(routerId: string, reason: 're-enrolled' | 'deleted' | 'disabled'): Promise<void>;
}

export interface PolicyRepository<P extends { id: string; name: string; tags: Record<string, unknown> }> {
  find(id: string): Promise<P | null>;
  findMany(ids: readonly string[]): Promise<P[]>;
  list(req: ListRequest, scope?: ListScope): Promise<Page<P>>;
  save(p: P, isNew: boolean): Promise<void>;
  delete(id: string): Promise<void>;
  referencing(id: string, columns: readonly string[]): Promise<P[]>;
}

export interface UpsertResult {
  applied: boolean;
  /** The role attributes before (null when the row is new). */
  previousAttributes: string[] | null;
}

export type ProjectedIdentity = Omit<IdentityRecord, never>;
export type ProjectedPostureCheck = Omit<PostureCheckRecord, never>;

export interface IdentityProjection {
  find(id: string): Promise<IdentityRecord | null>;
  findMany(ids: readonly string[]): Promise<IdentityRecord[]>;
  list(req: ListRequest, scope?: ListScope): Promise<Page<IdentityRecord>>;
  upsert(i: ProjectedIdentity): Promise<UpsertResult>;
  /** Deletes unless a newer version is stored; leaves a tombstone. True when a row was deleted. */
  delete(id: string, at: Date): Promise<boolean>;
}

export interface PostureCheckProjection {
  findMany(ids: readonly string[]): Promise<PostureCheckRecord[]>;
  list(req: ListRequest, scope?: ListScope): Promise<Page<PostureCheckRecord>>;
  any(): Promise<boolean>;
  upsert(c: ProjectedPostureCheck): Promise<UpsertResult>;
  delete(id: string, at: Date): Promise<boolean>;
}

export interface PolicyLink {
  serviceId: string;
  policyId: string;
  type: PolicyType;
  postureCheckIds: string[];
}

export interface AccessReader {
  permissions(identityId: string, serviceIds: readonly string[]): Promise<Map<string, { dial: boolean; bind: boolean }>>;
  /** Config type name → data per service; identity overrides win; `types` are config type ids or 'all'. */
  configData(identityId: string | null, serviceIds: readonly string[], types: 'all' | readonly string[]): Promise<Map<string, Record<string, Record<string, unknown>>>>;
  policiesFor(identityId: string, serviceIds: readonly string[]): Promise<PolicyLink[]>;
  sharedEdgeRouters(identityId: string, serviceId: string): Promise<Router[]>;
  /**
   * One lookup for session create, for many (identity, service) pairs at once: per pair, in order,
   * the service's name, the pair's counts, the linking policies, ERP ∩ SERP routers. Null: no such service.
   */
  serviceAccess(pairs: readonly IdentityServicePair[]): Promise<(PairAccess | null)[]>;
  counts(identityId: string, serviceId: string): Promise<{ identityRouters: number; serviceRouters: number }>;
  /** The services an identity reaches through service policies using any of the checks, with those checks. */
  postureCheckServices(identityId: string, checkIds: readonly string[]): Promise<{ id: string; name: string; postureCheckIds: string[] }[]>;
}

export interface IdentityServicePair {
  identityId: string;
  serviceId: string;
}

/** What session create needs to know about one (identity, service) pair. */
export interface PairAccess {
  serviceName: string;
  dial: boolean;
  bind: boolean;
  policies: PolicyLink[];
  edgeRouters: { id: string; name: string; cost: number; noTraversal: boolean; disabled: boolean }[];
}

export interface ServiceConfigOverride {
  serviceId: string;
  serviceName: string;
  configId: string;
  configName: string;
}

export interface ServiceConfigRepository {
  list(identityId: string): Promise<ServiceConfigOverride[]>;
  assign(identityId: string, items: readonly { serviceId: string; configId: string; configTypeId: string }[]): Promise<void>;
  remove(identityId: string, items: readonly { serviceId: string; configId: string }[] | 'all'): Promise<void>;
}

export interface UsageSource {
  source: string;
  byAttribute: Map<string, string[]>;
}

export interface UsageReader {
  attributes(table: string, where: string, filter: string | undefined): Promise<Page<string>>;
  usageAttributes(entityTable: string | null, where: string, entityType: string, req: ListRequest): Promise<Page<string>>;
  entityUsage(table: string, where: string, attrs: readonly string[]): Promise<Map<string, string[]>>;
  policyUsage(entityType: string, attrs: readonly string[] | 'all'): Promise<UsageSource[]>;
}

export type { RouterKind };

/** The three policy kinds: service policies, edge router policies, service edge router policies. */
export type PolicyKind = 'sp' | 'erp' | 'serp';
/** The entity types policies select. */
export type EntityType = 'identity' | 'service' | 'edgeRouter' | 'postureCheck';

/** A policy as evaluation needs it: one selector per side (sp: identities, services, posture checks;
 * erp: identities, edge routers; serp: services, edge routers) and, for sp, its type. */
export interface PolicyShape {
  id: string;
  selectors: Selector[];
  type?: PolicyType;
}

export interface PolicyEvaluation {
  sides: { added: string[]; removed: string[] }[];
  /** Side A entities (identities for sp/erp, services for serp) whose pair rows changed. */
  affectedA: string[];
  /** sp: the identities of the policy when its posture check links changed. */
  postureAffected: string[];
}

export interface EntityEvaluation {
  /** Identities whose identity↔service pairs or posture links changed. */
  affectedIdentities: string[];
}

/** Write-time evaluation (reference §5.2), inside the writing transaction. */
export interface Evaluator {
  policy(kind: PolicyKind, shape: PolicyShape, previousType?: PolicyType): Promise<PolicyEvaluation>;
  /** Before a policy row is deleted: removes its pair contributions; returns side A ids that had pairs. */
  retract(kind: PolicyKind, policyId: string, type?: PolicyType): Promise<string[]>;
  /** An entity created or re-attributed: re-matches it against every policy. */
  entity(entity: EntityType, id: string, attrs: readonly string[]): Promise<EntityEvaluation>;
  /** An entity about to be deleted: unlinks it from every policy (pairs included). */
  detach(entity: EntityType, id: string): Promise<EntityEvaluation>;
  /** An entity deleted: strips `@id` from every policy role list that names it. */
  removeReferences(entity: EntityType, id: string): Promise<void>;
  /** Recomputes every link and pair count from the role lists (the data integrity fix). */
  rebuildAll(): Promise<void>;
  /** The ids among `ids` that are not entities of the type. */
  missingIds(entity: EntityType, ids: readonly string[]): Promise<string[]>;
  /** id → name for display fields. */
  names(entity: EntityType, ids: readonly string[]): Promise<Map<string, string>>;
}

/**
 * Change events of this context, as the domain raises them (the events/ writer turns them into
 * bus events, see events/events.ts).
 */
export type DomainEvent =
  | { type: 'service-access.changed'; identityIds: readonly string[]; cause: string }
  | { type: 'router.deleted'; routerId: string; kind: string }
  | { type: 'router-data-model.changed'; changes: readonly RdmChange[] };

/** An entity of the router data model that a transaction created, changed or deleted. */
export interface RdmChange {
  kind: 'service' | 'config' | 'config-type' | 'service-policy' | 'identity' | 'posture-check';
  id: string;
}

export interface Repositories {
  configTypes: ConfigTypeRepository;
  configs: ConfigRepository;
  services: ServiceRepository;
  terminators: TerminatorRepository;
  routers: RouterRepository;
  servicePolicies: PolicyRepository<import('./model.js').ServicePolicy>;
  edgeRouterPolicies: PolicyRepository<import('./model.js').EdgeRouterPolicy>;
  serviceEdgeRouterPolicies: PolicyRepository<import('./model.js').ServiceEdgeRouterPolicy>;
  identities: IdentityProjection;
  postureChecks: PostureCheckProjection;
  access: AccessReader;
  serviceConfigs: ServiceConfigRepository;
  usage: UsageReader;
  evaluator: Evaluator;
}

/** One transaction: the repositories bound to it, plus the outbox. Every transaction holds the evaluation lock. */
export interface Transaction extends Repositories {
  emit(...events: DomainEvent[]): void;
}

export interface UnitOfWork {
  readonly repos: Repositories;
  run<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
}

/**
 * Router enrollment, owned by the pki-enrollment context (gRPC). `null` when that context does
 * not serve it (UNIMPLEMENTED or unreachable): the enrollment fields are then absent.
 */
export interface RouterEnrollments {
  create(routerId: string, kind: 'edge' | 'transit', name: string): Promise<import('./model.js').RouterEnrollmentInfo | null>;
  get(routerId: string): Promise<import('./model.js').RouterEnrollmentInfo | null>;
  /** The router is gone: its enrollment and certificate state go too (idempotent). */
  remove(routerId: string): Promise<void>;
}

/**
 * The identities of tunneler-enabled edge routers in identity-auth (§5.4): called after the router
 * write commits; failures are logged by the adapter and never fail the write (the local projection
 * identity stays, as without identity-auth).
 */
export interface RouterIdentities {
  /** Creates or renames the router's identity (id = router id, type Router); true when identity-auth confirmed it. */
  ensure(routerId: string, name: string): Promise<boolean>;
  /** Deletes the router's identity (idempotent). */
  remove(routerId: string): Promise<void>;
}

/**
 * identity-auth's own rendering of identities (`RenderIdentities`), for the association lists whose
 * items are identities: the `identityDetail` of GET /identities by id. `null` when identity-auth is
 * unavailable or does not serve it (the lists then render the projection's fields).
 */
export interface IdentityViews {
  /** `caller`: who reads the list (identity-auth shows it an enrollment's secrets only when it may use them). */
  render(ids: readonly string[], caller?: { isAdmin: boolean; isDefaultAdmin: boolean; permissions: string[] }): Promise<Map<string, Record<string, unknown>> | null>;
}

/** One evaluated posture check, as the posture context answers. */
export interface PostureResult {
  id: string;
  isPassing: boolean;
  typeId: string;
  timeout: number;
  timeoutRemaining: number;
  /** The other postureQuery fields (process, processes, promptOnWake, timeoutAt …). */
  extra: Record<string, unknown>;
}

/**
 * The posture context's evaluation (gRPC `PostureService.EvaluatePostureChecks`); null when unavailable.
 * `mfaCompletedAt` is the caller's MFA completion (its principal), for MFA checks of its own session.
 */
export interface PostureEvaluator {
  evaluate(identityId: string, apiSessionId: string, checkIds: readonly string[], mfaCompletedAt?: string): Promise<{ results: Map<string, PostureResult>; anyExist: boolean } | null>;
}

/** Claims of a session (service access) token, checked by `GET /services/{id}/edge-routers`. */
export interface SessionTokenReader {
  /** The token's claims when it is a well-formed session token (signature verified when the key is available), else null. */
  read(token: string): Promise<{ apiSessionId: string; serviceId: string } | null>;
}
