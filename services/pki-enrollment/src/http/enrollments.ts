import { createdEnvelope, dataEnvelope, emptyEnvelope } from '@ziti/errors';
import type { Handler } from '@ziti/http-kit';
import type { EnrollmentManager } from '../domain/enrollments.js';
import { listRequest, listResult } from './common.js';
import { enrollmentDetail } from './views.js';

/** Management `/enrollments` and `/identities/{id}/enrollments`. */
export function enrollmentHandlers(enrollments: EnrollmentManager): Record<string, Handler> {
  return {
    async listEnrollments(ctx) {
      return listResult(await enrollments.list(listRequest(ctx)), enrollmentDetail);
    },
    async createEnrollment(ctx) {
      const b = ctx.body as { method: string; identityId: string; expiresAt: string; caId?: string | null; username?: string | null };
      const e = await enrollments.create({ method: b.method, identityId: b.identityId, expiresAt: new Date(b.expiresAt), caId: b.caId, username: b.username });
      return { status: 201, body: createdEnvelope('enrollments', e.id) };
    },
    async detailEnrollment(ctx) {
      return { body: dataEnvelope(enrollmentDetail(await enrollments.detail(ctx.params.id!))) };
    },
    async deleteEnrollment(ctx) {
      await enrollments.delete(ctx.params.id!);
      return { body: emptyEnvelope() };
    },
    async refreshEnrollment(ctx) {
      const e = await enrollments.refresh(ctx.params.id!, new Date((ctx.body as { expiresAt: string }).expiresAt));
      return { body: createdEnvelope('enrollments', e.id) };
    },
    async getIdentityEnrollments(ctx) {
      return listResult(await enrollments.listForIdentity(ctx.params.id!), enrollmentDetail);
    },
  };
}
