import { batched } from '@ziti/db-kit';
import { ApiError } from '@ziti/errors';
import { normalizeName } from '@ziti/http-kit';
import type { ConfigType, ListRequest, Page, PolicyType, PostureQueries, Router, Service, ServiceView } from './model.js';
import type { IdentityServicePair, ListScope, PairAccess, PolicyLink, PostureEvaluator, RenderedService, SessionTokenReader, UnitOfWork } from './ports.js';
import type { Selector } from './roles.js';

/** Who is asking: the identity (and API session) whose view is rendered. */
export interface Viewer {
  identityId: string;
  apiSessionId: string;
  /** The API session's config types (from authenticate). */
  sessionConfigTypes: readonly string[];
  /** When the API session passed MFA (RFC 3339), if it did: MFA posture queries read it. */
  mfaCompletedAt?: string;
}

/** The parts of a service's detail that depend on who looks. */
export type ServiceExtras = Pick<ServiceView, 'permissions' | 'config' | 'postureQueries'>;

const DUMMY: Record<PolicyType, string> = {
  Dial: 'dummy dial policy: no posture checks defined',
  Bind: 'dummy bind policy: no posture checks defined',
};

/**
 * An identity's view of services and routers (§5.3, §5.4): every read is an indexed lookup in the
 * pair tables maintained at write time, never a policy scan.
 */
export class AccessManager {
  /** Session creates arriving together share one lookup (see `batched`). */
  private readonly accessLookup: (pair: IdentityServicePair) => Promise<PairAccess | null>;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly posture: PostureEvaluator,
    private readonly tokens: SessionTokenReader,
  ) {
    this.accessLookup = batched((pairs: IdentityServicePair[]) => this.uow.repos.access.serviceAccess(pairs));
  }

  /**
   * Client `GET /services`: only services a policy grants (admins included). The hot path: the
   * caller-independent fields come pre-rendered from the store, the caller's extras beside them.
   */
  async clientServices(viewer: Viewer, req: ListRequest, configTypes: readonly string[], roleFilter?: Selector): Promise<Page<RenderedService & ServiceExtras>> {
    const scopes: ListScope[] = [{ of: 'identity-services', id: viewer.identityId }];
    if (roleFilter) scopes.push({ of: 'role-filter', selector: roleFilter });
    const [page, types] = await Promise.all([this.uow.repos.services.listRendered(req, { of: 'all-of', scopes }), this.configTypesOf(viewer, configTypes)]);
    const extras = await this.extras(viewer, viewer.identityId, page.items.map((s) => s.id), types, false);
    return { ...page, items: page.items.map((s) => ({ ...s, ...extras.get(s.id)! })) };
  }

  /** Client `GET /services/{id}`: 404 unless a policy grants it. */
  async clientService(viewer: Viewer, id: string): Promise<ServiceView> {
    const s = await this.uow.repos.services.find(id);
    if (!s) throw ApiError.notFound();
    const [view] = await this.views(viewer, viewer.identityId, [s], await this.configTypesOf(viewer, []), false);
    if (view.permissions.length === 0) throw ApiError.notFound();
    return view;
  }

  /** Management: services with the caller's permissions (`Invalid` when none). */
  async managementViews(viewer: Viewer, services: Service[], configTypes: readonly string[] = []): Promise<ServiceView[]> {
    return this.views(viewer, viewer.identityId, services, await this.configTypesOf(viewer, configTypes), true);
  }

  /** Management `/identities/{id}/services`: the services the identity reaches, rendered for it. */
  async identityServices(viewer: Viewer, identityId: string, req: ListRequest, policyType?: PolicyType): Promise<Page<ServiceView>> {
    const page = await this.uow.repos.services.list(req, { of: 'identity-services', id: identityId, policyType });
    return { ...page, items: await this.views({ ...viewer, identityId }, identityId, page.items, await this.configTypesOf(viewer, []), true) };
  }

  /** The config types a request asks for: the query's `configTypes`, else the API session's. */
  private configTypesOf(viewer: Viewer, requested: readonly string[]): Promise<'all' | string[]> {
    return this.resolveConfigTypes(requested.length > 0 ? requested : viewer.sessionConfigTypes);
  }

  private async views(viewer: Viewer, identityId: string, services: Service[], types: 'all' | string[], management: boolean): Promise<ServiceView[]> {
    const extras = await this.extras(viewer, identityId, services.map((s) => s.id), types, management);
    return services.map((s) => ({ ...s, ...extras.get(s.id)! }));
  }

  /** What depends on the identity: permissions (Bind before Dial), config by type name, postureQueries. */
  private async extras(viewer: Viewer, identityId: string, ids: string[], types: 'all' | string[], management: boolean): Promise<Map<string, ServiceExtras>> {
    const repos = this.uow.repos;
    const [perms, configs, anyChecks] = await Promise.all([
      repos.access.permissions(identityId, ids),
      repos.access.configData(identityId, ids, types),
      repos.postureChecks.any(),
    ]);
    // The linking policies only matter when some posture check exists (else: the dummy entries).
    const links = anyChecks ? await repos.access.policiesFor(identityId, ids) : [];
    const posture = await this.postureQueries(viewer, identityId, links, anyChecks);
    const out = new Map<string, ServiceExtras>();
    for (const id of ids) {
      const p = perms.get(id);
      const granted: PolicyType[] = [...(p?.bind ? (['Bind'] as const) : []), ...(p?.dial ? (['Dial'] as const) : [])];
      out.set(id, {
        permissions: granted.length > 0 || !management ? granted : ['Invalid'],
        config: configs.get(id) ?? {},
        postureQueries: posture.dummy ? granted.map((t) => ({ policyId: DUMMY[t], policyType: t, isPassing: true, postureQueries: [] })) : (posture.byService.get(id) ?? []),
      });
    }
    return out;
  }

  /** `configTypes` entries are names or ids; `all` means every type. */
  private async resolveConfigTypes(requested: readonly string[]): Promise<'all' | string[]> {
    const names = requested.flatMap((r) => r.split(',')).map(normalizeName).filter(Boolean);
    if (names.includes('all')) return 'all';
    if (names.length === 0) return [];
    const [byId, byName] = await Promise.all([this.uow.repos.configTypes.findMany(names), this.uow.repos.configTypes.findByNames(names)]);
    return [...new Set([...byId, ...byName].map((t: ConfigType) => t.id))];
  }

  /**
   * postureQueries per service (§5.3). No posture check known: the dummy entries. Otherwise one
   * entry per service policy linking identity and service, its checks evaluated by the posture
   * context; when that context does not answer, the checks count as failing.
   */
  private async postureQueries(viewer: Viewer, identityId: string, links: readonly PolicyLink[], anyChecks: boolean): Promise<{ dummy: boolean; byService: Map<string, PostureQueries[]> }> {
    const byService = new Map<string, PostureQueries[]>();
    if (!anyChecks) return { dummy: true, byService };
    const checkIds = [...new Set(links.flatMap((l) => l.postureCheckIds))];
    const checks = new Map((await this.uow.repos.postureChecks.findMany(checkIds)).map((c) => [c.id, c]));
    const own = identityId === viewer.identityId;
    const evaluated = checkIds.length > 0 ? await this.posture.evaluate(identityId, own ? viewer.apiSessionId : '', checkIds, own ? viewer.mfaCompletedAt : undefined) : null;
    if (evaluated && !evaluated.anyExist) return { dummy: true, byService };
    for (const l of links) {
      const queries = l.postureCheckIds.flatMap((id) => {
        const c = checks.get(id);
        if (!c) return [];
        const r = evaluated?.results.get(id);
        return [
          {
            ...(r?.extra ?? {}),
            id,
            _links: { self: { href: `./posture-checks/${id}` } },
            createdAt: c.createdAt,
            updatedAt: c.updatedAt,
            tags: c.tags,
            queryType: r?.typeId || c.typeId,
            isPassing: r?.isPassing ?? false,
            timeout: r?.timeout ?? -1,
            timeoutRemaining: r?.timeoutRemaining ?? -1,
          },
        ];
      });
      const list = byService.get(l.serviceId) ?? [];
      list.push({ policyId: l.policyId, policyType: l.type, isPassing: queries.every((q) => q.isPassing), postureQueries: queries });
      byService.set(l.serviceId, list);
    }
    return { dummy: false, byService };
  }

  /** Client `GET /services/{id}/edge-routers`: the routers shared by the identity's ERPs and the service's SERPs. */
  async serviceEdgeRouters(viewer: Viewer, serviceId: string, sessionToken?: string): Promise<Router[]> {
    if (sessionToken !== undefined) {
      const claims = await this.tokens.read(sessionToken);
      if (!claims || claims.apiSessionId !== viewer.apiSessionId) {
        throw ApiError.of('UNAUTHORIZED', { cause: { code: 'UNHANDLED', message: 'invalid session token' } });
      }
    }
    const perms = await this.uow.repos.access.permissions(viewer.identityId, [serviceId]);
    if (!perms.get(serviceId)) throw ApiError.notFound();
    return this.uow.repos.access.sharedEdgeRouters(viewer.identityId, serviceId);
  }

  /** Client `GET /services/{id}/terminators`: the service's terminators, when the identity reaches it. */
  async assertReachable(identityId: string, serviceId: string): Promise<void> {
    const perms = await this.uow.repos.access.permissions(identityId, [serviceId]);
    if (!perms.get(serviceId)) throw ApiError.notFound();
  }

  /** `GET /identities/{id}/policy-advice/{serviceId}`. */
  async policyAdvice(identityId: string, serviceId: string) {
    const repos = this.uow.repos;
    const [identity, service] = await Promise.all([repos.identities.find(identityId), repos.services.find(serviceId)]);
    if (!identity || !service) throw ApiError.notFound();
    const [perms, common, counts] = await Promise.all([
      repos.access.permissions(identityId, [serviceId]),
      repos.access.sharedEdgeRouters(identityId, serviceId),
      repos.access.counts(identityId, serviceId),
    ]);
    const p = perms.get(serviceId);
    return { identity, service, isBindAllowed: !!p?.bind, isDialAllowed: !!p?.dial, ...counts, commonRouters: common };
  }

  /** The gRPC `GetServiceAccess` answer for session create: one indexed lookup. */
  async serviceAccess(identityId: string, serviceId: string) {
    const a = await this.accessLookup({ identityId, serviceId });
    if (!a || (!a.dial && !a.bind)) return { visible: false, serviceName: a?.serviceName ?? '', permissions: [], policies: [], edgeRouters: [] };
    return {
      visible: true,
      serviceName: a.serviceName,
      permissions: [...(a.bind ? ['Bind'] : []), ...(a.dial ? ['Dial'] : [])],
      policies: a.policies,
      edgeRouters: a.edgeRouters,
    };
  }

  /** gRPC `ListPostureCheckServices` (posture responses). */
  postureCheckServices(identityId: string, checkIds: readonly string[]) {
    return this.uow.repos.access.postureCheckServices(identityId, checkIds);
  }

  // ---------------------------------------------------------------- identity service-config overrides

  async listServiceConfigs(identityId: string) {
    if (!(await this.uow.repos.identities.find(identityId))) throw ApiError.notFound();
    return this.uow.repos.serviceConfigs.list(identityId);
  }

  async assignServiceConfigs(identityId: string, items: readonly { serviceId: string; configId: string }[]): Promise<void> {
    await this.uow.run(async (tx) => {
      if (!(await tx.identities.find(identityId))) throw ApiError.notFound();
      const configs = new Map((await tx.configs.findMany([...new Set(items.map((i) => i.configId))])).map((c) => [c.id, c]));
      const services = new Set((await tx.services.findMany([...new Set(items.map((i) => i.serviceId))])).map((s) => s.id));
      const rows = items.map((i) => {
        if (!services.has(i.serviceId)) throw ApiError.field('serviceId', 'no service found with the given id', i.serviceId);
        const c = configs.get(i.configId);
        if (!c) throw ApiError.field('configId', 'no config found with the given id', i.configId);
        return { ...i, configTypeId: c.configTypeId };
      });
      await tx.serviceConfigs.assign(identityId, rows);
      tx.emit({ type: 'service-access.changed', identityIds: [identityId], cause: 'service-config' });
    });
  }

  async removeServiceConfigs(identityId: string, items: readonly { serviceId: string; configId: string }[] | 'all'): Promise<void> {
    await this.uow.run(async (tx) => {
      if (!(await tx.identities.find(identityId))) throw ApiError.notFound();
      await tx.serviceConfigs.remove(identityId, items);
      tx.emit({ type: 'service-access.changed', identityIds: [identityId], cause: 'service-config' });
    });
  }
}
