import { createdEnvelope, dataEnvelope, emptyEnvelope } from '@ziti/errors';
import type { Handler } from '@ziti/http-kit';
import type { PostureCheckManager } from '../domain/check-manager.js';
import { postureCheckDetail, postureCheckTypeDetail } from '../domain/views.js';
import { listRequest, listResult, queryString, roleFilter } from './params.js';

/** Management `/posture-checks`, `/posture-check-types`, `/posture-check-role-attributes` and their usage. */
export function postureCheckHandlers(checks: PostureCheckManager): Record<string, Handler> {
  return {
    async listPostureChecks(ctx) {
      return listResult(await checks.list(listRequest(ctx), roleFilter(ctx)), postureCheckDetail);
    },
    async createPostureCheck(ctx) {
      return { status: 201, body: createdEnvelope('posture-checks', await checks.create(ctx.body)) };
    },
    async detailPostureCheck(ctx) {
      return { body: dataEnvelope(postureCheckDetail(await checks.detail(ctx.params.id!))) };
    },
    async updatePostureCheck(ctx) {
      await checks.update(ctx.params.id!, ctx.body);
      return { body: emptyEnvelope() };
    },
    async patchPostureCheck(ctx) {
      await checks.patch(ctx.params.id!, ctx.body);
      return { body: emptyEnvelope() };
    },
    async deletePostureCheck(ctx) {
      await checks.delete(ctx.params.id!);
      return { body: emptyEnvelope() };
    },
    async listPostureCheckTypes(ctx) {
      return listResult(await checks.types(listRequest(ctx)), postureCheckTypeDetail);
    },
    async detailPostureCheckType(ctx) {
      return { body: dataEnvelope(postureCheckTypeDetail(await checks.type(ctx.params.id!))) };
    },
    async listPostureCheckRoleAttributes(ctx) {
      return listResult(await checks.roleAttributes(listRequest(ctx)), (a) => a);
    },
    async listPostureCheckRoleAttributeUsage(ctx) {
      const withIds = ['true', '1'].includes((queryString(ctx, 'withIds') ?? '').toLowerCase());
      return listResult(await checks.roleAttributeUsage(listRequest(ctx), withIds), (u) => u);
    },
  };
}
