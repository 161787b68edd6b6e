import { ApiError } from '@ziti/errors';
import { shortId } from '@ziti/http-kit';
import type { EdgeRouterPolicy, ListRequest, Page, PolicyType, ServiceEdgeRouterPolicy, ServicePolicy, Tags } from './model.js';
import type { EntityType, ListScope, PolicyKind, PolicyRepository, Repositories, Transaction, UnitOfWork } from './ports.js';
import { type Semantic, parseSemantic, rolesDisplay, selector, validateRoles } from './roles.js';
import { requireName } from './names.js';

export interface PolicyTypes {
  sp: ServicePolicy;
  erp: EdgeRouterPolicy;
  serp: ServiceEdgeRouterPolicy;
}

/** One role list of a policy kind: its field, the entity type it selects. */
interface RoleField {
  field: 'identityRoles' | 'serviceRoles' | 'postureCheckRoles' | 'edgeRouterRoles';
  entity: EntityType;
}

/** The role lists of each kind, in evaluation side order (see the store's KINDS). */
export const ROLE_FIELDS: Record<PolicyKind, RoleField[]> = {
  sp: [
    { field: 'identityRoles', entity: 'identity' },
    { field: 'serviceRoles', entity: 'service' },
    { field: 'postureCheckRoles', entity: 'postureCheck' },
  ],
  erp: [
    { field: 'identityRoles', entity: 'identity' },
    { field: 'edgeRouterRoles', entity: 'edgeRouter' },
  ],
  serp: [
    { field: 'serviceRoles', entity: 'service' },
    { field: 'edgeRouterRoles', entity: 'edgeRouter' },
  ],
};

const PLURAL: Record<EntityType, string> = { identity: 'identities', service: 'services', edgeRouter: 'edge routers', postureCheck: 'posture checks' };

export type PolicyInput = Partial<Record<RoleField['field'], string[] | null>> & {
  name?: string | null;
  semantic?: string | null;
  type?: string | null;
  tags?: Tags | null;
};

const has = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

function repo<K extends PolicyKind>(r: Repositories, kind: K): PolicyRepository<PolicyTypes[K]> {
  const map = { sp: r.servicePolicies, erp: r.edgeRouterPolicies, serp: r.serviceEdgeRouterPolicies };
  return map[kind] as unknown as PolicyRepository<PolicyTypes[K]>;
}

/** `{role, name}` display entries of a policy's role lists, keyed by field (`identityRolesDisplay`…). */
export type RoleDisplays = Record<string, { role: string; name: string }[]>;

/** The three policy kinds: CRUD with §5.1 validation, evaluated at write time. */
export class PolicyManager {
  constructor(private readonly uow: UnitOfWork) {}

  list<K extends PolicyKind>(kind: K, req: ListRequest, scope?: ListScope): Promise<Page<PolicyTypes[K]>> {
    return repo(this.uow.repos, kind).list(req, scope);
  }

  async policy<K extends PolicyKind>(kind: K, id: string): Promise<PolicyTypes[K]> {
    const p = await repo(this.uow.repos, kind).find(id);
    if (!p) throw ApiError.notFound();
    return p;
  }

  /** The display entries of each policy (`@id` → `@name`), looked up in one query per entity type. */
  async displays<K extends PolicyKind>(kind: K, policies: readonly PolicyTypes[K][]): Promise<Map<string, RoleDisplays>> {
    const out = new Map<string, RoleDisplays>();
    const names = new Map<EntityType, Map<string, string>>();
    for (const rf of ROLE_FIELDS[kind]) {
      const ids = policies.flatMap((p) => (p as unknown as Record<string, string[]>)[rf.field].filter((r) => r.startsWith('@')).map((r) => r.slice(1)));
      names.set(rf.entity, await this.uow.repos.evaluator.names(rf.entity, [...new Set(ids)]));
    }
    for (const p of policies) {
      const d: RoleDisplays = {};
      for (const rf of ROLE_FIELDS[kind]) d[`${rf.field}Display`] = rolesDisplay((p as unknown as Record<string, string[]>)[rf.field], names.get(rf.entity)!);
      out.set(p.id, d);
    }
    return out;
  }

  async create<K extends PolicyKind>(kind: K, input: PolicyInput): Promise<string> {
    const id = shortId();
    await this.uow.run(async (tx) => {
      const p = await validated(tx, kind, id, input, null);
      await repo(tx, kind).save(p, true);
      await evaluate(tx, kind, p);
    });
    return id;
  }

  async update<K extends PolicyKind>(kind: K, id: string, input: PolicyInput, patch: boolean): Promise<void> {
    await this.uow.run(async (tx) => {
      const current = await repo(tx, kind).find(id);
      if (!current) throw ApiError.notFound();
      if ((current as { isSystem?: boolean }).isSystem) throw ApiError.of('ENTITY_CAN_NOT_BE_UPDATED');
      const merged: PolicyInput = { ...input };
      if (patch) {
        const c = current as unknown as Record<string, unknown>;
        for (const k of ['name', 'semantic', 'type', 'tags', ...ROLE_FIELDS[kind].map((r) => r.field)]) {
          if (!has(input, k) && k in c) (merged as Record<string, unknown>)[k] = c[k];
        }
      }
      const p = await validated(tx, kind, id, merged, current);
      await repo(tx, kind).save(p, false);
      await evaluate(tx, kind, p, (current as { type?: PolicyType }).type);
    });
  }

  async delete(kind: PolicyKind, id: string): Promise<void> {
    await this.uow.run(async (tx) => {
      const current = await repo(tx, kind).find(id);
      if (!current) throw ApiError.notFound();
      if ((current as { isSystem?: boolean }).isSystem) throw ApiError.of('ENTITY_CAN_NOT_BE_DELETED');
      const affected = await tx.evaluator.retract(kind, id, (current as { type?: PolicyType }).type);
      await repo(tx, kind).delete(id);
      if (kind === 'sp') tx.emit({ type: 'service-access.changed', identityIds: affected, cause: 'service-policy' });
    });
  }
}

async function evaluate<K extends PolicyKind>(tx: Transaction, kind: K, p: PolicyTypes[K], previousType?: PolicyType): Promise<void> {
  const fields = ROLE_FIELDS[kind];
  const rec = p as unknown as Record<string, unknown>;
  const selectors = fields.map((rf) => selector(rec[rf.field] as string[], p.semantic));
  const result = await tx.evaluator.policy(kind, { id: p.id, selectors, type: rec.type as PolicyType | undefined }, previousType);
  if (kind === 'sp') {
    tx.emit({ type: 'service-access.changed', identityIds: [...result.affectedA, ...result.postureAffected], cause: 'service-policy' });
  }
}

async function validated<K extends PolicyKind>(tx: Transaction, kind: K, id: string, input: PolicyInput, current: PolicyTypes[K] | null): Promise<PolicyTypes[K]> {
  const name = requireName(input.name);
  const semantic: Semantic = parseSemantic(input.semantic);
  const out: Record<string, unknown> = {
    id,
    name,
    semantic,
    tags: input.tags ?? {},
    createdAt: current?.createdAt ?? new Date(),
    updatedAt: new Date(),
  };
  if (kind === 'sp') {
    if (input.type !== 'Dial' && input.type !== 'Bind') throw ApiError.field('type', 'type in body should be one of [Dial Bind]', input.type ?? '');
    out.type = input.type;
  }
  if (kind === 'erp') out.isSystem = false;
  for (const rf of ROLE_FIELDS[kind]) {
    const roles = validateRoles(rf.field, input[rf.field]);
    const ids = roles.filter((r) => r.startsWith('@')).map((r) => r.slice(1));
    const missing = await tx.evaluator.missingIds(rf.entity, ids);
    if (missing.length > 0) throw ApiError.field(rf.field, `no ${PLURAL[rf.entity]} found with the given ids`, missing);
    out[rf.field] = roles;
  }
  return out as unknown as PolicyTypes[K];
}
