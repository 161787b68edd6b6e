import { createdEnvelope, dataEnvelope, emptyEnvelope, listEnvelope } from '@ziti/errors';
import type { Handler } from '@ziti/http-kit';
import type { AuthenticatorInput, AuthenticatorManager } from '../domain/authenticator-manager.js';
import { principalOf } from './access.js';
import { authenticatorDetail } from './auth-views.js';
import { listRequest, listResult } from './list.js';

const own = (id: string) => `./current-identity/authenticators/${id}`;

/**
 * Management `/authenticators` and `/identities/{id}/authenticators`, and the self-service
 * `/current-identity/authenticators` (scoped to the caller; another identity's is 404).
 */
export function authenticatorHandlers(authenticators: AuthenticatorManager): Record<string, Handler> {
  return {
    async listAuthenticators(ctx) {
      return listResult(await authenticators.list(listRequest(ctx)), (a) => authenticatorDetail(a));
    },
    async createAuthenticator(ctx) {
      return { status: 201, body: createdEnvelope('authenticators', await authenticators.create(ctx.body as AuthenticatorInput)) };
    },
    async detailAuthenticator(ctx) {
      return { body: dataEnvelope(authenticatorDetail(await authenticators.detail(ctx.params.id!))) };
    },
    async updateAuthenticator(ctx) {
      await authenticators.update(ctx.params.id!, ctx.body as AuthenticatorInput, true);
      return { body: emptyEnvelope() };
    },
    async patchAuthenticator(ctx) {
      await authenticators.update(ctx.params.id!, ctx.body as AuthenticatorInput, false);
      return { body: emptyEnvelope() };
    },
    async deleteAuthenticator(ctx) {
      await authenticators.delete(ctx.params.id!);
      return { body: emptyEnvelope() };
    },
    /** An association list: everything, pagination {limit: count, offset: 0, totalCount: count}. */
    async getIdentityAuthenticators(ctx) {
      const all = await authenticators.listOfIdentity(ctx.params.id!);
      return { body: listEnvelope(all.map((a) => authenticatorDetail(a)), { limit: all.length, offset: 0, totalCount: all.length }) };
    },
    async listCurrentIdentityAuthenticators(ctx) {
      const page = await authenticators.list(listRequest(ctx), principalOf(ctx).identityId);
      return listResult(page, (a) => authenticatorDetail(a, own(a.id)));
    },
    async detailCurrentIdentityAuthenticator(ctx) {
      const a = await authenticators.detail(ctx.params.id!, principalOf(ctx).identityId);
      return { body: dataEnvelope(authenticatorDetail(a, own(a.id))) };
    },
    async updateCurrentIdentityAuthenticator(ctx) {
      await authenticators.updateOwn(principalOf(ctx).identityId, ctx.params.id!, ctx.body as AuthenticatorInput, true, principalOf(ctx).apiSessionId);
      return { body: emptyEnvelope() };
    },
    async patchCurrentIdentityAuthenticator(ctx) {
      await authenticators.updateOwn(principalOf(ctx).identityId, ctx.params.id!, ctx.body as AuthenticatorInput, false, principalOf(ctx).apiSessionId);
      return { body: emptyEnvelope() };
    },
  };
}
