import { ApiError, createdEnvelope, dataEnvelope, emptyEnvelope } from '@ziti/errors';
import type { Caller, Handler, HandlerContext } from '@ziti/http-kit';
import type { EnrollmentManager } from '../domain/enrollments.js';
import { listRequest, listResult } from './common.js';
import { enrollmentDetail } from './views.js';

/** The caller of a management request (access already checked: it has a principal). */
function callerOf(ctx: HandlerContext): Caller {
  if (!ctx.principal) throw ApiError.of('UNAUTHORIZED');
  return ctx.principal;
}

/** Management `/enrollments` and `/identities/{id}/enrollments`. */
export function enrollmentHandlers(enrollments: EnrollmentManager): Record<string, Handler> {
  return {
    async listEnrollments(ctx) {
      return listResult(await enrollments.list(listRequest(ctx), callerOf(ctx)), enrollmentDetail);
    },
    async createEnrollment(ctx) {
      const b = ctx.body as { method: string; identityId: string; expiresAt: string; caId?: string | null; username?: string | null };
      const e = await enrollments.create(
        { method: b.method, identityId: b.identityId, expiresAt: new Date(b.expiresAt), caId: b.caId, username: b.username },
        { caller: callerOf(ctx) },
      );
      return { status: 201, body: createdEnvelope('enrollments', e.id) };
    },
    async detailEnrollment(ctx) {
      return { body: dataEnvelope(enrollmentDetail(await enrollments.detail(ctx.params.id!, callerOf(ctx)))) };
    },
    async deleteEnrollment(ctx) {
      await enrollments.delete(ctx.params.id!, callerOf(ctx));
      return { body: emptyEnvelope() };
    },
    async refreshEnrollment(ctx) {
      const e = await enrollments.refresh(ctx.params.id!, new Date((ctx.body as { expiresAt: string }).expiresAt), callerOf(ctx));
      return { body: createdEnvelope('enrollments', e.id) };
    },
    async getIdentityEnrollments(ctx) {
      return listResult(await enrollments.listForIdentity(ctx.params.id!, callerOf(ctx)), enrollmentDetail);
    },
  };
}
