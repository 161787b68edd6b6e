import { createdEnvelope, dataEnvelope, emptyEnvelope } from '@ziti/errors';
import { type Handler, clientCertChainOf } from '@ziti/http-kit';
import type { CertificateLifecycle } from '../domain/cert-lifecycle.js';
import { principalOf } from './access.js';

/**
 * The certificate lifecycle: management `request-extend` (one authenticator, or every one of an
 * identity) and `re-enroll`; self-service `extend` (the current certificate presented over mTLS,
 * forwarded signed by the gateway) and `extend-verify`.
 */
export function certLifecycleHandlers(lifecycle: CertificateLifecycle, internalSecret: string): Record<string, Handler> {
  return {
    async requestExtendAuthenticator(ctx) {
      await lifecycle.requestExtend(ctx.params.id!, (ctx.body as { rollKeys?: boolean }).rollKeys === true);
      return { body: emptyEnvelope() };
    },
    async requestExtendAllCertAuthenticators(ctx) {
      await lifecycle.requestExtendAll(ctx.params.id!, (ctx.body as { rollKeys?: boolean }).rollKeys === true);
      return { body: emptyEnvelope() };
    },
    async reEnrollAuthenticator(ctx) {
      const id = await lifecycle.reEnroll(ctx.params.id!, (ctx.body as { expiresAt: string }).expiresAt);
      return { status: 201, body: createdEnvelope('enrollments', id) };
    },
    async extendCurrentIdentityAuthenticator(ctx) {
      const presented = clientCertChainOf(ctx.req, internalSecret);
      const certs = await lifecycle.extend(principalOf(ctx).identityId, ctx.params.id!, presented, (ctx.body as { clientCertCsr: string }).clientCertCsr);
      return { body: dataEnvelope(certs) };
    },
    async extendVerifyCurrentIdentityAuthenticator(ctx) {
      await lifecycle.verifyExtend(principalOf(ctx).identityId, ctx.params.id!, (ctx.body as { clientCert: string }).clientCert);
      return { body: emptyEnvelope() };
    },
  };
}
