import { ApiError, createdEnvelope, dataEnvelope, emptyEnvelope } from '@ziti/errors';
import type { Handler, HandlerContext } from '@ziti/http-kit';
import type { AccessManager } from '../domain/access-manager.js';
import type { ConfigManager } from '../domain/config-manager.js';
import type { PolicyManager } from '../domain/policy-manager.js';
import { parseRoleFilter } from '../domain/roles.js';
import type { RouterManager } from '../domain/router-manager.js';
import type { ServiceManager } from '../domain/service-manager.js';
import { id, listRequest, listResult, policyType, queryString, queryStrings, viewer } from './list.js';
import { type PolicyRenderer } from './policies.js';
import {
  clientTerminator,
  commonEdgeRouter,
  configDetail,
  edgeRouterDetail,
  fabricTerminatorDetail,
  renderedServiceDetail,
  serviceDetail,
  terminatorDetail,
} from './views.js';

const roleFilter = (ctx: HandlerContext) => parseRoleFilter(queryStrings(ctx, 'roleFilter'), queryString(ctx, 'roleSemantic'));

/** `/services` on both APIs (the client sees what policies grant), its sub-lists, and `/terminators`. */
export function serviceHandlers(
  services: ServiceManager,
  access: AccessManager,
  configs: ConfigManager,
  routers: RouterManager,
  policies: PolicyManager,
  render: PolicyRenderer,
): Record<string, Handler> {
  return {
    async listServices(ctx) {
      const v = viewer(ctx);
      const types = queryStrings(ctx, 'configTypes');
      const rf = roleFilter(ctx);
      if (ctx.api === 'client') {
        const page = await access.clientServices(v, listRequest(ctx), types, rf);
        const meta = JSON.stringify({ filterableFields: page.filterableFields, pagination: { limit: page.limit, offset: page.offset, totalCount: page.totalCount } })
          .replace(/"limit":9223372036854776000\b/, '"limit":9223372036854775807');
        return { raw: `{"data":[${page.items.map(renderedServiceDetail).join(',')}],"meta":${meta}}`, contentType: 'application/json' };
      }
      const page = await services.list(listRequest(ctx), rf ? { of: 'role-filter', selector: rf } : undefined);
      return listResult({ ...page, items: await access.managementViews(v, page.items, types) }, serviceDetail);
    },
    async detailService(ctx) {
      const v = viewer(ctx);
      if (ctx.api === 'client') return { body: dataEnvelope(serviceDetail(await access.clientService(v, id(ctx)))) };
      const [view] = await access.managementViews(v, [await services.service(id(ctx))]);
      return { body: dataEnvelope(serviceDetail(view)) };
    },
    async createService(ctx) {
      return { status: 201, body: createdEnvelope('services', await services.create(ctx.body)) };
    },
    async updateService(ctx) {
      await services.update(id(ctx), ctx.body, false);
      return { body: emptyEnvelope() };
    },
    async patchService(ctx) {
      await services.update(id(ctx), ctx.body, true);
      return { body: emptyEnvelope() };
    },
    async deleteService(ctx) {
      await services.delete(id(ctx));
      return { body: emptyEnvelope() };
    },

    async listServiceEdgeRouters(ctx) {
      if (ctx.api === 'client') {
        const header = ctx.req.headers['session-token'];
        const token = typeof header === 'string' ? header : queryString(ctx, 'session-token');
        const list = await access.serviceEdgeRouters(viewer(ctx), id(ctx), token);
        const live = await routers.live(list.map((r) => r.id));
        return { body: dataEnvelope({ edgeRouters: list.map((r) => commonEdgeRouter(r, live.get(r.id))) }) };
      }
      await services.service(id(ctx));
      const page = await routers.list('edge-routers', listRequest(ctx), { of: 'linked', link: 'service-edge-routers', ownerId: id(ctx) });
      const { enrollment, live } = await routers.extras(page.items.map((r) => r.id));
      return listResult(page, (r) => edgeRouterDetail(r, enrollment.get(r.id), live.get(r.id)));
    },
    async listServiceTerminators(ctx) {
      if (ctx.api === 'client') await access.assertReachable(viewer(ctx).identityId, id(ctx));
      else await services.service(id(ctx));
      const page = await services.listTerminators(listRequest(ctx), { of: 'linked', link: 'service-terminators', ownerId: id(ctx) });
      return listResult(page, ctx.api === 'client' ? clientTerminator : terminatorDetail);
    },
    async listServiceConfig(ctx) {
      await services.service(id(ctx));
      return listResult(await configs.list(listRequest(ctx), { of: 'linked', link: 'service-configs', ownerId: id(ctx) }), configDetail);
    },
    async listServiceServicePolicies(ctx) {
      await services.service(id(ctx));
      return render.page('sp', await policies.list('sp', listRequest(ctx), { of: 'linked', link: 'service-sps', ownerId: id(ctx) }));
    },
    async listServiceServiceEdgeRouterPolicies(ctx) {
      await services.service(id(ctx));
      return render.page('serp', await policies.list('serp', listRequest(ctx), { of: 'linked', link: 'service-serps', ownerId: id(ctx) }));
    },
    async listServiceIdentities(ctx) {
      await services.service(id(ctx));
      return render.identityPage(listRequest(ctx), { of: 'service-identities', id: id(ctx), policyType: policyType(ctx) }, ctx.principal);
    },

    async listTerminators(ctx) {
      const page = await services.listTerminators(listRequest(ctx));
      return ctx.api === 'fabric' ? listResult(page, fabricTerminatorDetail) : listResult(page, terminatorDetail);
    },
    async createTerminator(ctx) {
      return { status: 201, body: createdEnvelope('terminators', await services.saveTerminator(null, ctx.body, false)) };
    },
    async detailTerminator(ctx) {
      return { body: dataEnvelope(terminatorDetail(await services.terminator(id(ctx)))) };
    },
    async updateTerminator(ctx) {
      await services.saveTerminator(id(ctx), ctx.body, false);
      return { body: emptyEnvelope() };
    },
    async patchTerminator(ctx) {
      await services.saveTerminator(id(ctx), ctx.body, true);
      return { body: emptyEnvelope() };
    },
    async deleteTerminator(ctx) {
      if (!id(ctx)) throw ApiError.notFound();
      await services.deleteTerminator(id(ctx));
      return { body: emptyEnvelope() };
    },
  };
}
