import type { IncomingMessage } from 'node:http';
import { MODELS } from '@ziti/api-contract';
import { ApiError, dataEnvelope, emptyEnvelope } from '@ziti/errors';
import { type Handler, type HandlerContext, clientCertChainOf, jsonText, mediaTypeOf, validateBody } from '@ziti/http-kit';
import type { EnrollFlows, EnrollResult } from '../domain/enroll.js';
import { queryString, readRawBody } from './common.js';

/** Content types of the legacy PEM path of `POST /enroll` (always answered in JSON). */
const PEM_TYPES = ['application/pkcs7', 'application/x-pem-file', 'text/plain'];

function acceptedMedia(req: IncomingMessage): string[] {
  const accept = req.headers.accept;
  if (accept === undefined || accept.trim() === '') return [];
  return accept.split(',').map((m) => m.split(';')[0]!.trim().toLowerCase());
}

/** No Accept, or one naming application/json or a wildcard that covers it. */
function acceptsJson(req: IncomingMessage, wildcards: readonly string[]): boolean {
  const media = acceptedMedia(req);
  return media.length === 0 || media.some((m) => m === 'application/json' || wildcards.includes(m));
}

const certs = (r: EnrollResult) => dataEnvelope(r);

/**
 * The client API's enroll operations. The generic `POST /enroll` reads its own body: a PEM CSR
 * (`application/x-pem-file`, `text/plain`, `application/pkcs7`) goes through the controller's
 * legacy path (415 UNSUPPORTED_MEDIA when Accept excludes JSON), anything else through the
 * spec's negotiation (406 for an Accept without JSON, 415 for a content type other than JSON).
 */
export function enrollHandlers(flows: EnrollFlows, internalSecret: string): Record<string, Handler> {
  const chainOf = (ctx: HandlerContext) => clientCertChainOf(ctx.req, internalSecret);
  return {
    async enroll(ctx) {
      const token = queryString(ctx, 'token');
      const method = queryString(ctx, 'method');
      const ct = mediaTypeOf(ctx.req) ?? '';
      if (PEM_TYPES.includes(ct) || (ct === '' && method === 'ca')) {
        if (!acceptsJson(ctx.req, ['*/*'])) {
          throw new ApiError({ code: 'UNSUPPORTED_MEDIA', message: 'No suitable accept media types were detected, supports: application/json', status: 415 });
        }
        const pem = await readRawBody(ctx.req);
        // Exactly `application/json`, as OpenZiti answers: sdk-golang reads the certificate from
        // `data.cert` only for that content type (anything else it takes for a bare PEM).
        return { raw: Buffer.from(jsonText(certs(await flows.generic(token, method, { csrPem: pem }, chainOf(ctx))))), contentType: 'application/json' };
      }
      if (ct !== '' && !/^application\/([a-z.+-]*\+)?json$/.test(ct)) {
        throw new ApiError({ code: 'COULD_NOT_VALIDATE', message: 'The supplied request contains an invalid document', status: 415 }, {
          cause: { field: 'Content-Type', reason: `unsupported media type "${ct}", only [application/pkcs7 application/json application/x-pem-file text/plain] are allowed`, value: ct },
        });
      }
      if (!acceptsJson(ctx.req, ['*/*', 'application/*'])) {
        throw new ApiError({ code: 'COULD_NOT_VALIDATE', message: 'The supplied request contains an invalid document', status: 406 }, {
          cause: { field: 'Accept', reason: 'unsupported media type requested, only [application/json] are available', value: String(ctx.req.headers.accept) },
        });
      }
      const body = validateBody<Record<string, string | undefined>>(MODELS.genericEnroll!, ctx.body ?? {});
      return { body: certs(await flows.generic(token, method, body, chainOf(ctx))) };
    },
    async enrollOtt(ctx) {
      const { token, clientCsr } = ctx.body as { token?: string; clientCsr?: string };
      return { body: certs(await flows.ott(token, clientCsr)) };
    },
    async enrollOttCa(ctx) {
      const { token } = ctx.body as { token?: string };
      await flows.ottca(token, chainOf(ctx));
      return { body: emptyEnvelope() };
    },
    async enrollUpdb(ctx) {
      const { password } = ctx.body as { password?: string };
      await flows.updb(queryString(ctx, 'token'), password);
      return { body: emptyEnvelope() };
    },
    async enrollCa(ctx) {
      const name = ctx.body && typeof ctx.body === 'object' && typeof (ctx.body as { name?: unknown }).name === 'string' ? (ctx.body as { name: string }).name : undefined;
      await flows.ca(chainOf(ctx), name);
      return { body: emptyEnvelope() };
    },
    async enrollErOtt(ctx) {
      const { token, serverCsr, clientCsr } = ctx.body as { token?: string; serverCsr?: string; clientCsr?: string };
      return { body: certs(await flows.router(token, serverCsr, clientCsr)) };
    },
    async extendRouterEnrollment(ctx) {
      const { certCsr, serverCertCsr } = ctx.body as { certCsr: string; serverCertCsr: string };
      return { body: certs(await flows.extendRouter(chainOf(ctx), certCsr, serverCertCsr)) };
    },
  };
}
