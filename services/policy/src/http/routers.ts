import { createdEnvelope, dataEnvelope, emptyEnvelope } from '@ziti/errors';
import type { Handler } from '@ziti/http-kit';
import type { AccessManager } from '../domain/access-manager.js';
import type { PolicyManager } from '../domain/policy-manager.js';
import { parseRoleFilter } from '../domain/roles.js';
import type { RouterCollection, RouterManager } from '../domain/router-manager.js';
import type { ServiceManager } from '../domain/service-manager.js';
import type { UsageManager } from '../domain/usage-manager.js';
import { id, listRequest, listResult, queryString, queryStrings, viewer } from './list.js';
import type { PolicyRenderer } from './policies.js';
import { edgeRouterDetail, fabricRouterDetail, routerDetail, serviceDetail } from './views.js';

/** `/edge-routers`, `/routers`, `/transit-routers`, their sub-lists, and the role attribute lists of services and edge routers. */
export function routerHandlers(
  routers: RouterManager,
  services: ServiceManager,
  access: AccessManager,
  policies: PolicyManager,
  render: PolicyRenderer,
  usage: UsageManager,
): Record<string, Handler> {
  const plain = (collection: Exclude<RouterCollection, 'edge-routers'>, noun: string, nouns: string): Record<string, Handler> => ({
    [`list${nouns}`]: async (ctx) => {
      const page = await routers.list(collection, listRequest(ctx));
      const { enrollment, live } = await routers.extras(page.items.map((r) => r.id));
      // The fabric API's GET /routers: the same routers (every kind), in its own shape.
      if (ctx.api === 'fabric') return listResult(page, (r) => fabricRouterDetail(r, enrollment.get(r.id), live.get(r.id)));
      return listResult(page, (r) => routerDetail(collection, r, enrollment.get(r.id), live.get(r.id)));
    },
    [`create${noun}`]: async (ctx) => ({ status: 201, body: createdEnvelope(collection, await routers.create(collection, ctx.body)) }),
    [`detail${noun}`]: async (ctx) => {
      const r = await routers.router(collection, id(ctx));
      const { enrollment, live } = await routers.extras([r.id]);
      return { body: dataEnvelope(routerDetail(collection, r, enrollment.get(r.id), live.get(r.id))) };
    },
    [`update${noun}`]: async (ctx) => {
      await routers.update(collection, id(ctx), ctx.body, false);
      return { body: emptyEnvelope() };
    },
    [`patch${noun}`]: async (ctx) => {
      await routers.update(collection, id(ctx), ctx.body, true);
      return { body: emptyEnvelope() };
    },
    [`delete${noun}`]: async (ctx) => {
      await routers.delete(collection, id(ctx));
      return { body: emptyEnvelope() };
    },
  });
  return {
    ...plain('routers', 'Router', 'Routers'),
    ...plain('transit-routers', 'TransitRouter', 'TransitRouters'),

    async listEdgeRouters(ctx) {
      const rf = parseRoleFilter(queryStrings(ctx, 'roleFilter'), queryString(ctx, 'roleSemantic'));
      const page = await routers.list('edge-routers', listRequest(ctx), rf ? { of: 'role-filter', selector: rf } : undefined);
      const { enrollment, live } = await routers.extras(page.items.map((r) => r.id));
      return listResult(page, (r) => edgeRouterDetail(r, enrollment.get(r.id), live.get(r.id)));
    },
    async createEdgeRouter(ctx) {
      return { status: 201, body: createdEnvelope('edge-routers', await routers.create('edge-routers', ctx.body)) };
    },
    async detailEdgeRouter(ctx) {
      const r = await routers.router('edge-routers', id(ctx));
      const { enrollment, live } = await routers.extras([r.id]);
      return { body: dataEnvelope(edgeRouterDetail(r, enrollment.get(r.id), live.get(r.id))) };
    },
    async updateEdgeRouter(ctx) {
      await routers.update('edge-routers', id(ctx), ctx.body, false);
      return { body: emptyEnvelope() };
    },
    async patchEdgeRouter(ctx) {
      await routers.update('edge-routers', id(ctx), ctx.body, true);
      return { body: emptyEnvelope() };
    },
    async deleteEdgeRouter(ctx) {
      await routers.delete('edge-routers', id(ctx));
      return { body: emptyEnvelope() };
    },
    async reEnrollEdgeRouter(ctx) {
      await routers.reEnroll(id(ctx));
      return { body: emptyEnvelope() };
    },
    async listEdgeRouterServices(ctx) {
      await routers.router('edge-routers', id(ctx));
      const page = await services.list(listRequest(ctx), { of: 'linked', link: 'router-services', ownerId: id(ctx) });
      return listResult({ ...page, items: await access.managementViews(viewer(ctx), page.items) }, serviceDetail);
    },
    async listEdgeRouterIdentities(ctx) {
      await routers.router('edge-routers', id(ctx));
      return render.identityPage(listRequest(ctx), { of: 'linked', link: 'router-identities', ownerId: id(ctx) }, ctx.principal);
    },
    async listEdgeRouterEdgeRouterPolicies(ctx) {
      await routers.router('edge-routers', id(ctx));
      return render.page('erp', await policies.list('erp', listRequest(ctx), { of: 'linked', link: 'router-erps', ownerId: id(ctx) }));
    },
    async listEdgeRouterServiceEdgeRouterPolicies(ctx) {
      await routers.router('edge-routers', id(ctx));
      return render.page('serp', await policies.list('serp', listRequest(ctx), { of: 'linked', link: 'router-serps', ownerId: id(ctx) }));
    },

    async listServiceRoleAttributes(ctx) {
      return listResult(await usage.attributes('service', queryString(ctx, 'filter')), (a) => a);
    },
    async listEdgeRouterRoleAttributes(ctx) {
      return listResult(await usage.attributes('edge-router', queryString(ctx, 'filter')), (a) => a);
    },
    async listServiceRoleAttributeUsage(ctx) {
      return listResult(await usage.usage('service', listRequest(ctx), queryString(ctx, 'withIds') === 'true'), (u) => u);
    },
    async listEdgeRouterRoleAttributeUsage(ctx) {
      return listResult(await usage.usage('edge-router', listRequest(ctx), queryString(ctx, 'withIds') === 'true'), (u) => u);
    },
  };
}
