import { createdEnvelope, dataEnvelope, emptyEnvelope, formatTimestamp } from '@ziti/errors';
import type { Handler } from '@ziti/http-kit';
import type { EnrollmentRequest, IdentityManager } from '../domain/identity-manager.js';
import type { TraceSpecInput } from '../domain/trace.js';
import type { IdentityInput } from '../domain/identity-rules.js';
import type { RoleAttributeQueries } from '../domain/role-attributes.js';
import { parseRoleFilter } from '../domain/role-filter.js';
import { actorOf, principalOf, requireEntityAccess } from './access.js';
import { roleAttributeUsageDetail } from './auth-views.js';
import { listRequest, listResult, queryString, queryStrings } from './list.js';
import { identityDetail } from './views.js';

/**
 * The body (already schema-checked) as domain input. `isDefaultAdmin` is immutable (ignored, but
 * a non-admin naming it is refused); `enrollment` (ott/ottca/updb, create only) goes separately.
 */
function input(body: Record<string, unknown>): IdentityInput {
  const { enrollment: _enrollment, ...rest } = body;
  return rest as IdentityInput;
}

/** Management `/identities`, their lifecycle, and the identity role-attribute lists. */
export function identityHandlers(identities: IdentityManager, roleAttributes: RoleAttributeQueries): Record<string, Handler> {
  return {
    async listIdentities(ctx) {
      const roleFilter = parseRoleFilter(queryStrings(ctx, 'roleFilter'), queryString(ctx, 'roleSemantic'));
      const viewer = principalOf(ctx);
      return listResult(await identities.list(listRequest(ctx), roleFilter), (v) => identityDetail(v, viewer));
    },
    async createIdentity(ctx) {
      const enrollment = (ctx.body as { enrollment?: EnrollmentRequest }).enrollment ?? {};
      const id = await identities.create(actorOf(ctx), input(ctx.body), enrollment);
      return { status: 201, body: createdEnvelope('identities', id) };
    },
    async detailIdentity(ctx) {
      return { body: dataEnvelope(identityDetail(await identities.detail(ctx.params.id!), principalOf(ctx))) };
    },
    async updateIdentity(ctx) {
      await identities.update(actorOf(ctx), ctx.params.id!, input(ctx.body));
      return { body: emptyEnvelope() };
    },
    async patchIdentity(ctx) {
      await identities.patch(actorOf(ctx), ctx.params.id!, input(ctx.body));
      return { body: emptyEnvelope() };
    },
    async deleteIdentity(ctx) {
      await identities.delete(actorOf(ctx), ctx.params.id!);
      return { body: emptyEnvelope() };
    },
    async disableIdentity(ctx) {
      requireEntityAccess(ctx, 'identity', 'update');
      await identities.disable(actorOf(ctx), ctx.params.id!, (ctx.body as { durationMinutes: number }).durationMinutes);
      return { body: emptyEnvelope() };
    },
    async updateIdentityTracing(ctx) {
      const trace = await identities.trace(actorOf(ctx), ctx.params.id!, (ctx.body ?? {}) as TraceSpecInput);
      return { body: dataEnvelope(trace ? { enabled: true, traceId: trace.traceId, until: formatTimestamp(trace.until) } : { enabled: false }) };
    },
    async enableIdentity(ctx) {
      requireEntityAccess(ctx, 'identity', 'update');
      await identities.enable(actorOf(ctx), ctx.params.id!);
      return { body: emptyEnvelope() };
    },
    async removeIdentityMfa(ctx) {
      requireEntityAccess(ctx, 'identity', 'update');
      await identities.removeMfa(actorOf(ctx), ctx.params.id!);
      return { body: emptyEnvelope() };
    },
    async listIdentityRoleAttributes(ctx) {
      return listResult(await roleAttributes.list(listRequest(ctx)), (a) => a);
    },
    async listIdentityRoleAttributeUsage(ctx) {
      const withIds = queryString(ctx, 'withIds') === 'true';
      return listResult(await roleAttributes.usage(listRequest(ctx), withIds), roleAttributeUsageDetail);
    },
  };
}
