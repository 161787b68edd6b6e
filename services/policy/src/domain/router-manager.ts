import { ApiError } from '@ziti/errors';
import { shortId } from '@ziti/http-kit';
import type { ListRequest, Page, Router, RouterEnrollmentInfo, RouterKind, RouterLiveState, Tags } from './model.js';
import type { ListScope, NewRouter, RouterEnrollments, RouterIdentities, RouterStates, Transaction, UnitOfWork } from './ports.js';
import { selector, validateAttributes } from './roles.js';
import { sameSet } from './service-manager.js';
import { requireName } from './names.js';
import { hostingOf } from './projection-manager.js';

export interface RouterInput {
  name?: string | null;
  cost?: number | null;
  noTraversal?: boolean | null;
  disabled?: boolean | null;
  ctrlChanListeners?: Record<string, string[]> | null;
  configs?: string[] | null;
  tags?: Tags | null;
  // edge routers only
  roleAttributes?: string[] | null;
  isTunnelerEnabled?: boolean | null;
  appData?: Tags | null;
}

/** Which collection a request came through: it decides the kind of a new router and what is visible. */
export type RouterCollection = 'edge-routers' | 'transit-routers' | 'routers';

const KIND_OF: Record<RouterCollection, RouterKind> = { 'edge-routers': 'edge', 'transit-routers': 'transit', routers: 'fabric' };
const VIEW_OF = { 'edge-routers': 'edge', 'transit-routers': 'transit', routers: 'all' } as const;
const has = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/** The name of the system edge router policy of a tunneler-enabled edge router (§5.4). */
export const systemPolicyName = (routerId: string) => `edge-router-${routerId}-system`;

const NO_ROUTER_IDENTITIES: RouterIdentities = { ensure: async () => false, remove: async () => undefined };
/** No router control plane: every router is offline, nothing to disconnect. */
export const NO_ROUTER_STATES: RouterStates = { get: async () => new Map(), disconnect: async () => undefined };

/** Edge routers, transit routers and fabric routers; tunneler-enabled edge routers' system identity and policy. */
export class RouterManager {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly enrollments: RouterEnrollments,
    private readonly identities: RouterIdentities = NO_ROUTER_IDENTITIES,
    private readonly states: RouterStates = NO_ROUTER_STATES,
  ) {}

  /** The live state of each router fabric reports (one call for them all); the others are offline. */
  live(ids: readonly string[]): Promise<Map<string, RouterLiveState>> {
    return ids.length === 0 ? Promise.resolve(new Map()) : this.states.get(ids);
  }

  /** Enrollment and live state of a page of routers, asked for together. */
  async extras(ids: readonly string[]): Promise<{ enrollment: Map<string, RouterEnrollmentInfo>; live: Map<string, RouterLiveState> }> {
    const [enrollment, live] = await Promise.all([this.enrollment(ids), this.live(ids)]);
    return { enrollment, live };
  }

  list(collection: RouterCollection, req: ListRequest, scope?: ListScope): Promise<Page<Router>> {
    return this.uow.repos.routers.list(VIEW_OF[collection], req, scope);
  }

  /** The fabric API's router links and circuits: none while no router connects (no data plane yet). */

  async router(collection: RouterCollection, id: string): Promise<Router> {
    const r = await this.uow.repos.routers.find(id);
    if (!r || !visible(collection, r)) throw ApiError.notFound();
    return r;
  }

  /** Enrollment state of each router (absent entries when pki-enrollment does not answer). */
  async enrollment(ids: readonly string[]): Promise<Map<string, RouterEnrollmentInfo>> {
    const out = new Map<string, RouterEnrollmentInfo>();
    const results = await Promise.all(ids.map((id) => this.enrollments.get(id)));
    ids.forEach((id, i) => results[i] && out.set(id, results[i]!));
    return out;
  }

  async create(collection: RouterCollection, input: RouterInput): Promise<string> {
    const id = shortId();
    const kind = KIND_OF[collection];
    const created = await this.uow.run(async (tx) => {
      const r = await fields(tx, id, kind, input, null);
      await tx.routers.save(r, true);
      if (kind === 'edge') {
        await tx.evaluator.entity('edgeRouter', id, r.roleAttributes);
        if (r.isTunnelerEnabled) await enableTunneler(tx, r);
      }
      return r;
    });
    if (created.isTunnelerEnabled) await this.identities.ensure(id, created.name);
    if (kind !== 'fabric') await this.enrollments.create(id, kind === 'edge' ? 'edge' : 'transit', created.name);
    return id;
  }

  async update(collection: RouterCollection, id: string, input: RouterInput, patch: boolean): Promise<void> {
    let disabled = false;
    const change = await this.uow.run(async (tx): Promise<{ op: 'ensure' | 'remove'; name: string } | null> => {
      const current = await tx.routers.find(id);
      if (!current || !visible(collection, current)) throw ApiError.notFound();
      const keep = <K extends keyof RouterInput>(k: K, v: RouterInput[K]) => (patch && !has(input, k) ? v : input[k]);
      const edgeOnly = collection === 'edge-routers';
      const merged: RouterInput = {
        name: keep('name', current.name),
        cost: keep('cost', current.cost),
        noTraversal: keep('noTraversal', current.noTraversal),
        disabled: keep('disabled', current.disabled),
        ctrlChanListeners: keep('ctrlChanListeners', current.ctrlChanListeners),
        configs: keep('configs', current.configs),
        tags: keep('tags', current.tags),
        roleAttributes: edgeOnly ? keep('roleAttributes', current.roleAttributes) : current.roleAttributes,
        isTunnelerEnabled: edgeOnly ? keep('isTunnelerEnabled', current.isTunnelerEnabled) : current.isTunnelerEnabled,
        appData: edgeOnly ? keep('appData', current.appData) : current.appData,
      };
      const r = await fields(tx, id, current.kind, merged, current);
      await tx.routers.save(r, false);
      disabled = r.disabled;
      if (current.kind !== 'edge') return null;
      if (!sameSet(r.roleAttributes, current.roleAttributes)) await tx.evaluator.entity('edgeRouter', id, r.roleAttributes);
      if (r.isTunnelerEnabled && !current.isTunnelerEnabled) await enableTunneler(tx, r);
      else if (!r.isTunnelerEnabled && current.isTunnelerEnabled) await disableTunneler(tx, id);
      else if (r.isTunnelerEnabled && r.name !== current.name) await renameRouterIdentity(tx, r);
      if (r.isTunnelerEnabled && (!current.isTunnelerEnabled || r.name !== current.name)) return { op: 'ensure', name: r.name };
      return !r.isTunnelerEnabled && current.isTunnelerEnabled ? { op: 'remove', name: r.name } : null;
    });
    // identity-auth's copy of the router identity, after the commit (§5.4).
    if (change?.op === 'ensure') await this.identities.ensure(id, change.name);
    else if (change?.op === 'remove') await this.identities.remove(id);
    // A disabled router may not stay connected (fabric refuses it when it comes back).
    if (disabled) await this.states.disconnect(id, 'disabled');
  }

  async delete(collection: RouterCollection, id: string): Promise<void> {
    const wasTunneler = await this.uow.run(async (tx) => {
      const current = await tx.routers.find(id);
      if (!current || !visible(collection, current)) throw ApiError.notFound();
      if (current.isTunnelerEnabled) await disableTunneler(tx, id);
      if (current.kind === 'edge') {
        await tx.evaluator.detach('edgeRouter', id);
        await tx.evaluator.removeReferences('edgeRouter', id);
      }
      await tx.routers.delete(id);
      tx.emit({ type: 'router.deleted', routerId: id, kind: current.kind });
      return current.isTunnelerEnabled;
    });
    if (wasTunneler) await this.identities.remove(id);
    await this.enrollments.remove(id);
    await this.states.disconnect(id, 'deleted');
  }

  /** `POST /edge-routers/{id}/re-enroll`: a new enrollment from pki-enrollment. */
  async reEnroll(id: string): Promise<void> {
    const r = await this.router('edge-routers', id);
    const e = await this.enrollments.create(id, 'edge', r.name);
    if (!e) throw ApiError.of('FAILED_ER_REENROLLMENT', { cause: { code: 'UNHANDLED', message: 'router enrollment is not available (pki-enrollment)' } });
    await this.states.disconnect(id, 're-enrolled');
  }
}

function visible(collection: RouterCollection, r: Router): boolean {
  if (collection === 'edge-routers') return r.kind === 'edge';
  if (collection === 'transit-routers') return r.kind !== 'edge';
  return true;
}

async function fields(tx: Transaction, id: string, kind: RouterKind, input: RouterInput, current: Router | null): Promise<NewRouter> {
  const name = requireName(input.name);
  const cost = input.cost ?? 0;
  if (!Number.isInteger(cost) || cost < 0 || cost > 65535) throw ApiError.field('cost', 'cost should be between 0 and 65535', cost);
  const configIds = [...new Set(input.configs ?? [])];
  const found = await tx.configs.findMany(configIds);
  const missing = configIds.filter((c) => !found.some((f) => f.id === c));
  if (missing.length > 0) throw ApiError.field('configs', 'no configs found with the given ids', missing);
  const types = await tx.configTypes.findMany([...new Set(found.map((c) => c.configTypeId))]);
  for (const c of found) {
    const t = types.find((x) => x.id === c.configTypeId);
    if (t?.target !== 'router') throw ApiError.field('configs', `config ${c.id} of type ${c.configTypeName} does not target routers`, c.id);
  }
  return {
    id,
    name,
    kind,
    fingerprint: current?.fingerprint ?? null,
    cost,
    noTraversal: !!input.noTraversal,
    disabled: !!input.disabled,
    ctrlChanListeners: input.ctrlChanListeners ?? {},
    roleAttributes: kind === 'edge' ? validateAttributes(input.roleAttributes) : [],
    isTunnelerEnabled: kind === 'edge' && !!input.isTunnelerEnabled,
    appData: input.appData ?? {},
    configs: configIds,
    tags: input.tags ?? {},
  };
}

/** The router's identity (id = router id, type Router) and its system edge router policy (§5.4). */
async function enableTunneler(tx: Transaction, r: NewRouter): Promise<void> {
  const now = new Date();
  await tx.identities.upsert({
    id: r.id, name: r.name, roleAttributes: [], isAdmin: false, isDefaultAdmin: false, disabled: false, typeId: 'Router',
    externalId: null, authPolicyId: 'default', isSystem: true, tags: {}, ...hostingOf({}, null), createdAt: now, updatedAt: now,
  });
  await tx.evaluator.entity('identity', r.id, []);
  const policyId = shortId();
  const roles = [`@${r.id}`];
  await tx.edgeRouterPolicies.save(
    { id: policyId, name: systemPolicyName(r.id), semantic: 'AnyOf', identityRoles: roles, edgeRouterRoles: roles, isSystem: true, tags: {}, createdAt: now, updatedAt: now },
    true,
  );
  await tx.evaluator.policy('erp', { id: policyId, selectors: [selector(roles, 'AnyOf'), selector(roles, 'AnyOf')] });
}

async function disableTunneler(tx: Transaction, routerId: string): Promise<void> {
  const page = await tx.edgeRouterPolicies.list({ filter: `name = "${systemPolicyName(routerId)}"`, limit: '-1' });
  for (const p of page.items.filter((x) => x.isSystem)) {
    await tx.evaluator.retract('erp', p.id);
    await tx.edgeRouterPolicies.delete(p.id);
  }
  const identity = await tx.identities.find(routerId);
  if (identity?.isSystem) {
    await tx.evaluator.detach('identity', routerId);
    await tx.evaluator.removeReferences('identity', routerId);
    await tx.identities.delete(routerId, identity.updatedAt);
  }
}

async function renameRouterIdentity(tx: Transaction, r: NewRouter): Promise<void> {
  const identity = await tx.identities.find(r.id);
  if (identity?.isSystem) await tx.identities.upsert({ ...identity, name: r.name, updatedAt: new Date() });
}
