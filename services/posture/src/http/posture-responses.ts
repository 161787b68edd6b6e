import { strictPostureResponseBody } from '@ziti/api-contract/dist/models/posture.js';
import { ApiError, dataEnvelope } from '@ziti/errors';
import { type Handler, type HandlerContext, validateBody } from '@ziti/http-kit';
import type { PostureManager } from '../domain/posture-manager.js';
import type { PostureResponseInput } from '../domain/posture-data.js';

const RESPONSE_TYPES = ['OS', 'PROCESS', 'DOMAIN', 'MAC', 'ENDPOINT_STATE'] as const;
/** At most this many responses in one bulk submission. */
const MAX_BULK = 256;
/** Longest string kept from a posture response. */
const MAX_STRING = 1024;

function checkStrings(field: string, v: unknown): void {
  if (typeof v === 'string' && v.length > MAX_STRING) throw ApiError.field(field, `${field} in body should be at most ${MAX_STRING} chars long`, v.slice(0, 64));
  if (Array.isArray(v)) v.forEach((x, i) => checkStrings(`${field}.${i}`, x));
}

/** One posture response: its `typeId` picks the kind, whose model the whole body must match. */
export function parseResponse(body: Record<string, unknown>, prefix = ''): PostureResponseInput {
  const typeId = body.typeId;
  if (!RESPONSE_TYPES.includes(typeId as (typeof RESPONSE_TYPES)[number])) {
    throw ApiError.field(`${prefix}typeId`, `${prefix}typeId in body should be one of [${RESPONSE_TYPES.join(' ')}]`, typeId);
  }
  try {
    validateBody(strictPostureResponseBody(typeId as string)!, body);
  } catch (err) {
    if (prefix && err instanceof ApiError && err.cause?.field) err.cause.field = `${prefix}${err.cause.field}`;
    throw err;
  }
  for (const [k, v] of Object.entries(body)) checkStrings(`${prefix}${k}`, v);
  return body as unknown as PostureResponseInput;
}

/** The caller's MFA completion time, when identity-auth puts it on the principal (`mfaCompletedAt`). */
export function mfaCompletedAt(ctx: HandlerContext): string | undefined {
  const v = (ctx.principal as { mfaCompletedAt?: unknown } | undefined)?.mfaCompletedAt;
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** Client `POST /posture-response` and `/posture-response-bulk`. */
export function postureResponseHandlers(posture: PostureManager): Record<string, Handler> {
  const submit = async (ctx: HandlerContext, responses: PostureResponseInput[]) => {
    const p = ctx.principal!;
    return posture.submit(p.identityId, p.apiSessionId, responses, mfaCompletedAt(ctx));
  };
  return {
    async createPostureResponse(ctx) {
      const services = await submit(ctx, [parseResponse(ctx.body)]);
      return { status: 201, body: dataEnvelope({ services }) };
    },
    async createPostureResponseBulk(ctx) {
      const list = ctx.body as Record<string, unknown>[];
      if (list.length > MAX_BULK) throw ApiError.field('(root)', `(root) in body should have at most ${MAX_BULK} items`, list.length);
      const services = await submit(ctx, list.map((b, i) => parseResponse(b, `${i}.`)));
      return { body: dataEnvelope({ services }) };
    },
  };
}
