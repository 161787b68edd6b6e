import { createdEnvelope, dataEnvelope, emptyEnvelope } from '@ziti/errors';
import type { Handler } from '@ziti/http-kit';
import type { AuthPolicyManager } from '../domain/auth-policy-manager.js';
import type { AuthPolicyInput } from '../domain/auth-policy-rules.js';
import { authPolicyDetail } from './auth-views.js';
import { listRequest, listResult } from './list.js';

/** Management `/auth-policies`. */
export function authPolicyHandlers(policies: AuthPolicyManager): Record<string, Handler> {
  return {
    async listAuthPolicies(ctx) {
      return listResult(await policies.list(listRequest(ctx)), authPolicyDetail);
    },
    async createAuthPolicy(ctx) {
      return { status: 201, body: createdEnvelope('auth-policies', await policies.create(ctx.body as AuthPolicyInput)) };
    },
    async detailAuthPolicy(ctx) {
      return { body: dataEnvelope(authPolicyDetail(await policies.detail(ctx.params.id!))) };
    },
    async updateAuthPolicy(ctx) {
      await policies.update(ctx.params.id!, ctx.body as AuthPolicyInput);
      return { body: emptyEnvelope() };
    },
    async patchAuthPolicy(ctx) {
      await policies.patch(ctx.params.id!, ctx.body as AuthPolicyInput);
      return { body: emptyEnvelope() };
    },
    async deleteAuthPolicy(ctx) {
      await policies.delete(ctx.params.id!);
      return { body: emptyEnvelope() };
    },
  };
}
