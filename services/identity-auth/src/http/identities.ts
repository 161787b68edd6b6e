import { createdEnvelope, dataEnvelope, emptyEnvelope } from '@ziti/errors';
import type { Handler, HandlerContext } from '@ziti/http-kit';
import type { IdentityManager } from '../domain/identity-manager.js';
import type { Actor, IdentityInput } from '../domain/identity-rules.js';
import { parseRoleFilter } from '../domain/role-filter.js';
import { listRequest, listResult, queryString, queryStrings } from './list.js';
import { identityDetail } from './views.js';

const actor = (ctx: HandlerContext): Actor => ({ isAdmin: !!(ctx.principal?.isAdmin || ctx.principal?.isDefaultAdmin) });

/**
 * The body (already schema-checked) as domain input. `isDefaultAdmin` is immutable and ignored;
 * `enrollment` (ott/ottca/updb on create) belongs to pki-enrollment and is not handled yet.
 */
function input(body: Record<string, unknown>): IdentityInput {
  const { enrollment: _enrollment, isDefaultAdmin: _isDefaultAdmin, ...rest } = body;
  return rest as IdentityInput;
}

/** Management `/identities`. */
export function identityHandlers(identities: IdentityManager): Record<string, Handler> {
  return {
    async listIdentities(ctx) {
      const roleFilter = parseRoleFilter(queryStrings(ctx, 'roleFilter'), queryString(ctx, 'roleSemantic'));
      return listResult(await identities.list(listRequest(ctx), roleFilter), (v) => identityDetail(v));
    },
    async createIdentity(ctx) {
      const id = await identities.create(actor(ctx), input(ctx.body));
      return { status: 201, body: createdEnvelope('identities', id) };
    },
    async detailIdentity(ctx) {
      return { body: dataEnvelope(identityDetail(await identities.detail(ctx.params.id!))) };
    },
    async updateIdentity(ctx) {
      await identities.update(actor(ctx), ctx.params.id!, input(ctx.body));
      return { body: emptyEnvelope() };
    },
    async patchIdentity(ctx) {
      await identities.patch(actor(ctx), ctx.params.id!, input(ctx.body));
      return { body: emptyEnvelope() };
    },
    async deleteIdentity(ctx) {
      await identities.delete(actor(ctx), ctx.params.id!);
      return { body: emptyEnvelope() };
    },
  };
}
