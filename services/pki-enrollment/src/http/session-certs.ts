import { dataEnvelope, emptyEnvelope } from '@ziti/errors';
import type { Handler, HandlerContext } from '@ziti/http-kit';
import type { SessionCertManager } from '../domain/session-certs.js';
import { listRequest, listResult } from './common.js';
import { sessionCertDetail } from './views.js';

/** Client `/current-api-session/certificates`: scoped to the caller's API session. */
export function sessionCertHandlers(certs: SessionCertManager): Record<string, Handler> {
  const session = (ctx: HandlerContext) => ctx.principal!.apiSessionId;
  return {
    async listCurrentApiSessionCertificates(ctx) {
      return listResult(await certs.list(session(ctx), listRequest(ctx)), sessionCertDetail);
    },
    async createCurrentApiSessionCertificate(ctx) {
      const { cert, cas } = await certs.create(
        { apiSessionId: session(ctx), identityId: ctx.principal!.identityId },
        (ctx.body as { csr: string }).csr,
      );
      return {
        status: 201,
        body: dataEnvelope({ _links: { self: { href: `./current-api-session/certificates/${cert.id}` } }, id: cert.id, certificate: cert.certPem, cas }),
      };
    },
    async detailCurrentApiSessionCertificate(ctx) {
      return { body: dataEnvelope(sessionCertDetail(await certs.detail(session(ctx), ctx.params.id!))) };
    },
    async deleteCurrentApiSessionCertificate(ctx) {
      await certs.delete(session(ctx), ctx.params.id!);
      return { body: emptyEnvelope() };
    },
  };
}
