import { ApiError, dataEnvelope } from '@ziti/errors';
import type { Handler } from '@ziti/http-kit';
import type { TokenEnrollment } from '../domain/ext-jwt/token-enrollment.js';
import { requestBearerTokens } from './access.js';

/** The header that names the signer whose tokens enroll (optional; else the token's `iss` decides). */
export const TOKEN_ISSUER_ID_HEADER = 'ziti-token-issuer-id';

/**
 * `POST /enroll/token` (client API, anonymous): the external JWT comes as `Authorization: Bearer`
 * (required by the spec: without the header, 400 COULD_NOT_VALIDATE on `Authorization`), the
 * signer optionally as `ziti-token-issuer-id`, the CSR in the body (`tokenEnrollmentRequest`).
 */
export function enrollTokenHandlers(enrollment: TokenEnrollment): Record<string, Handler> {
  return {
    async enrollToken(ctx) {
      if (ctx.req.headers.authorization === undefined) throw ApiError.field('Authorization', 'Authorization in header is required');
      const issuer = ctx.req.headersDistinct?.[TOKEN_ISSUER_ID_HEADER]?.[0];
      const result = await enrollment.enroll({
        bearerTokens: requestBearerTokens(ctx),
        ...(issuer !== undefined ? { issuerId: issuer.trim() } : {}),
        clientCsr: (ctx.body as { clientCsr?: string } | undefined)?.clientCsr,
      });
      return { body: dataEnvelope(result) };
    },
  };
}
