import { createdEnvelope, dataEnvelope, emptyEnvelope } from '@ziti/errors';
import type { Caller, Handler, HandlerResult } from '@ziti/http-kit';
import type { AccessManager } from '../domain/access-manager.js';
import type { IdentityRecord, ListRequest, Page, PostureCheckRecord } from '../domain/model.js';
import type { PolicyManager, PolicyTypes } from '../domain/policy-manager.js';
import type { IdentityViews, ListScope, PolicyKind, UnitOfWork } from '../domain/ports.js';
import type { RouterManager } from '../domain/router-manager.js';
import type { ServiceManager } from '../domain/service-manager.js';
import { id, listRequest, listResult, viewer } from './list.js';
import {
  edgeRouterDetail,
  edgeRouterPolicyDetail,
  identityDetail,
  postureCheckDetail,
  serviceDetail,
  serviceEdgeRouterPolicyDetail,
  servicePolicyDetail,
} from './views.js';

/** Renders policy pages (with their display fields) and the projected entities' association lists. */
export class PolicyRenderer {
  constructor(
    private readonly policies: PolicyManager,
    private readonly uow: UnitOfWork,
    private readonly identityViews?: IdentityViews,
  ) {}

  async page<K extends PolicyKind>(kind: K, page: Page<PolicyTypes[K]>): Promise<HandlerResult> {
    const displays = await this.policies.displays(kind, page.items);
    return listResult(page, (p) => this.one(kind, p, displays.get(p.id) ?? {}));
  }

  async detail<K extends PolicyKind>(kind: K, p: PolicyTypes[K]): Promise<HandlerResult> {
    const displays = await this.policies.displays(kind, [p]);
    return { body: dataEnvelope(this.one(kind, p, displays.get(p.id) ?? {})) };
  }

  private one<K extends PolicyKind>(kind: K, p: PolicyTypes[K], d: Record<string, { role: string; name: string }[]>) {
    if (kind === 'sp') return servicePolicyDetail(p as PolicyTypes['sp'], d);
    if (kind === 'erp') return edgeRouterPolicyDetail(p as PolicyTypes['erp'], d);
    return serviceEdgeRouterPolicyDetail(p as PolicyTypes['serp'], d);
  }

  identity(identityId: string): Promise<IdentityRecord | null> {
    return this.uow.repos.identities.find(identityId);
  }

  identities(req: ListRequest, scope: ListScope): Promise<Page<IdentityRecord>> {
    return this.uow.repos.identities.list(req, scope);
  }

  /**
   * An association list whose items are identities: the page is selected here (filter, sort and
   * paging over the projection), and each item is identity-auth's own `identityDetail` of it, the
   * one GET /identities answers (one `RenderIdentities` call per page). An identity identity-auth
   * does not know (a router's local identity), or every item when identity-auth is unavailable, is
   * rendered from the projection, with the fields only identity-auth knows empty. identity-auth
   * shows `caller` an enrollment's secrets only when it may use them.
   */
  async identityPage(req: ListRequest, scope: ListScope, caller: Caller | undefined): Promise<HandlerResult> {
    const page = await this.identities(req, scope);
    const rendered = page.items.length > 0 && this.identityViews ? await this.identityViews.render(page.items.map((i) => i.id), caller) : null;
    return listResult(page, (i) => rendered?.get(i.id) ?? identityDetail(i));
  }

  postureChecks(req: ListRequest, scope: ListScope): Promise<Page<PostureCheckRecord>> {
    return this.uow.repos.postureChecks.list(req, scope);
  }
}

const PLURAL: Record<PolicyKind, string> = { sp: 'service-policies', erp: 'edge-router-policies', serp: 'service-edge-router-policies' };

/** CRUD of one policy kind; operation ids are `<verb><Noun>`. */
function crud(kind: PolicyKind, noun: string, nouns: string, policies: PolicyManager, render: PolicyRenderer): Record<string, Handler> {
  return {
    [`list${nouns}`]: async (ctx) => render.page(kind, await policies.list(kind, listRequest(ctx))),
    [`create${noun}`]: async (ctx) => ({ status: 201, body: createdEnvelope(PLURAL[kind], await policies.create(kind, ctx.body)) }),
    [`detail${noun}`]: async (ctx) => render.detail(kind, await policies.policy(kind, id(ctx))),
    [`update${noun}`]: async (ctx) => {
      await policies.update(kind, id(ctx), ctx.body, false);
      return { body: emptyEnvelope() };
    },
    [`patch${noun}`]: async (ctx) => {
      await policies.update(kind, id(ctx), ctx.body, true);
      return { body: emptyEnvelope() };
    },
    [`delete${noun}`]: async (ctx) => {
      await policies.delete(kind, id(ctx));
      return { body: emptyEnvelope() };
    },
  };
}

/** `/service-policies`, `/edge-router-policies`, `/service-edge-router-policies` and their association lists. */
export function policyHandlers(policies: PolicyManager, render: PolicyRenderer, services: ServiceManager, routers: RouterManager, access: AccessManager): Record<string, Handler> {
  const servicesOf = async (ctx: Parameters<Handler>[0], scope: ListScope) => {
    const page = await services.list(listRequest(ctx), scope);
    return listResult({ ...page, items: await access.managementViews(viewer(ctx), page.items) }, serviceDetail);
  };
  const routersOf = async (ctx: Parameters<Handler>[0], scope: ListScope) => {
    const page = await routers.list('edge-routers', listRequest(ctx), scope);
    const { enrollment, live } = await routers.extras(page.items.map((r) => r.id));
    return listResult(page, (r) => edgeRouterDetail(r, enrollment.get(r.id), live.get(r.id)));
  };
  return {
    ...crud('sp', 'ServicePolicy', 'ServicePolicies', policies, render),
    ...crud('erp', 'EdgeRouterPolicy', 'EdgeRouterPolicies', policies, render),
    ...crud('serp', 'ServiceEdgeRouterPolicy', 'ServiceEdgeRouterPolicies', policies, render),

    async listServicePolicyIdentities(ctx) {
      await policies.policy('sp', id(ctx));
      return render.identityPage(listRequest(ctx), { of: 'linked', link: 'sp-identities', ownerId: id(ctx) }, ctx.principal);
    },
    async listServicePolicyServices(ctx) {
      await policies.policy('sp', id(ctx));
      return servicesOf(ctx, { of: 'linked', link: 'sp-services', ownerId: id(ctx) });
    },
    async listServicePolicyPostureChecks(ctx) {
      await policies.policy('sp', id(ctx));
      return listResult(await render.postureChecks(listRequest(ctx), { of: 'linked', link: 'sp-posture-checks', ownerId: id(ctx) }), postureCheckDetail);
    },
    async listEdgeRouterPolicyEdgeRouters(ctx) {
      await policies.policy('erp', id(ctx));
      return routersOf(ctx, { of: 'linked', link: 'erp-edge-routers', ownerId: id(ctx) });
    },
    async listEdgeRouterPolicyIdentities(ctx) {
      await policies.policy('erp', id(ctx));
      return render.identityPage(listRequest(ctx), { of: 'linked', link: 'erp-identities', ownerId: id(ctx) }, ctx.principal);
    },
    async listServiceEdgeRouterPolicyEdgeRouters(ctx) {
      await policies.policy('serp', id(ctx));
      return routersOf(ctx, { of: 'linked', link: 'serp-edge-routers', ownerId: id(ctx) });
    },
    async listServiceEdgeRouterPolicyServices(ctx) {
      await policies.policy('serp', id(ctx));
      return servicesOf(ctx, { of: 'linked', link: 'serp-services', ownerId: id(ctx) });
    },
  };
}
