import { ApiError, dataEnvelope, emptyEnvelope } from '@ziti/errors';
import type { Handler } from '@ziti/http-kit';
import type { AccessManager } from '../domain/access-manager.js';
import type { PolicyManager } from '../domain/policy-manager.js';
import type { RouterManager } from '../domain/router-manager.js';
import { id, listRequest, listResult, policyType, viewer } from './list.js';
import type { PolicyRenderer } from './policies.js';
import { currentIdentityEdgeRouter, edgeRouterDetail, entityRef, serviceConfigDetail, serviceDetail } from './views.js';

/** `[{serviceId, configId}]` of the service-config operations; anything else is a 400. */
function pairs(body: unknown): { serviceId: string; configId: string }[] {
  if (!Array.isArray(body)) throw ApiError.field('(root)', 'serviceConfigs in body must be of type array', body);
  return body.map((b, i) => {
    const item = b as Record<string, unknown>;
    if (typeof item?.serviceId !== 'string' || item.serviceId === '') throw ApiError.field(`[${i}].serviceId`, 'serviceId is required', item?.serviceId);
    if (typeof item?.configId !== 'string' || item.configId === '') throw ApiError.field(`[${i}].configId`, 'configId is required', item?.configId);
    return { serviceId: item.serviceId, configId: item.configId };
  });
}

/** Management `/identities/{id}/…` of this context, and client `/current-identity/edge-routers`. */
export function identityHandlers(access: AccessManager, policies: PolicyManager, routers: RouterManager, render: PolicyRenderer): Record<string, Handler> {
  const requireIdentity = async (identityId: string) => {
    if (!(await render.identity(identityId))) throw ApiError.notFound();
  };
  return {
    async listIdentityServices(ctx) {
      await requireIdentity(id(ctx));
      return listResult(await access.identityServices(viewer(ctx), id(ctx), listRequest(ctx), policyType(ctx)), serviceDetail);
    },
    async listIdentityEdgeRouters(ctx) {
      await requireIdentity(id(ctx));
      const page = await routers.list('edge-routers', listRequest(ctx), { of: 'linked', link: 'identity-edge-routers', ownerId: id(ctx) });
      const { enrollment, live } = await routers.extras(page.items.map((r) => r.id));
      return listResult(page, (r) => edgeRouterDetail(r, enrollment.get(r.id), live.get(r.id)));
    },
    async listIdentitysEdgeRouterPolicies(ctx) {
      await requireIdentity(id(ctx));
      return render.page('erp', await policies.list('erp', listRequest(ctx), { of: 'linked', link: 'identity-erps', ownerId: id(ctx) }));
    },
    async listIdentityServicePolicies(ctx) {
      await requireIdentity(id(ctx));
      return render.page('sp', await policies.list('sp', listRequest(ctx), { of: 'linked', link: 'identity-sps', ownerId: id(ctx) }));
    },
    async getIdentityPolicyAdvice(ctx) {
      const a = await access.policyAdvice(id(ctx), ctx.params.serviceId!);
      const live = await routers.live(a.commonRouters.map((r) => r.id));
      return {
        body: dataEnvelope({
          commonRouters: a.commonRouters.map((r) => ({ ...entityRef('edge-routers', r.id, r.name), isOnline: live.get(r.id)?.isOnline ?? false })),
          identity: entityRef('identities', a.identity.id, a.identity.name),
          identityId: a.identity.id,
          identityRouterCount: a.identityRouters,
          isBindAllowed: a.isBindAllowed,
          isDialAllowed: a.isDialAllowed,
          service: entityRef('services', a.service.id, a.service.name),
          serviceId: a.service.id,
          serviceRouterCount: a.serviceRouters,
        }),
      };
    },
    async listIdentitysServiceConfigs(ctx) {
      const items = await access.listServiceConfigs(id(ctx));
      return listResult({ items, totalCount: items.length, limit: items.length, offset: 0, filterableFields: [] }, serviceConfigDetail);
    },
    async associateIdentitysServiceConfigs(ctx) {
      await access.assignServiceConfigs(id(ctx), pairs(ctx.body));
      return { body: emptyEnvelope() };
    },
    async disassociateIdentitysServiceConfigs(ctx) {
      const body = ctx.body;
      const empty = body === undefined || body === null || (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0);
      await access.removeServiceConfigs(id(ctx), empty || (Array.isArray(body) && body.length === 0) ? 'all' : pairs(body));
      return { body: emptyEnvelope() };
    },
    async getCurrentIdentityEdgeRouters(ctx) {
      const page = await routers.list('edge-routers', listRequest(ctx), { of: 'linked', link: 'identity-edge-routers', ownerId: viewer(ctx).identityId });
      const live = await routers.live(page.items.map((r) => r.id));
      return listResult(page, (r) => currentIdentityEdgeRouter(r, live.get(r.id)));
    },
  };
}
