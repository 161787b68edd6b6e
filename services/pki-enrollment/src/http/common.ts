import type { IncomingMessage } from 'node:http';
import { listEnvelope } from '@ziti/errors';
import { type HandlerContext, type HandlerResult, MAX_BODY_BYTES, readBody } from '@ziti/http-kit';
import type { ListRequest, Page } from '../domain/model.js';

/** A single-valued query parameter (the first, when repeated). */
export function queryString(ctx: HandlerContext, name: string): string | undefined {
  const v = ctx.query[name];
  const first = Array.isArray(v) ? v[0] : v;
  return typeof first === 'string' ? first : undefined;
}

export function listRequest(ctx: HandlerContext): ListRequest {
  return {
    filter: queryString(ctx, 'filter'),
    limit: queryString(ctx, 'limit'),
    offset: queryString(ctx, 'offset'),
    sort: queryString(ctx, 'sort'),
  };
}

/** The list envelope (the kit writes an unlimited page's limit exactly). */
export function listResult<T, W>(page: Page<T>, map: (item: T) => W): HandlerResult {
  return {
    body: listEnvelope(page.items.map(map), { limit: page.limit, offset: page.offset, totalCount: page.totalCount }, page.filterableFields),
  };
}

/** Reads a body the kit did not parse (non-JSON), at most 1 MiB (the gateway enforces it first). */
export async function readRawBody(req: IncomingMessage): Promise<string> {
  if (req.readableEnded) return '';
  return (await readBody(req, MAX_BODY_BYTES)).toString('utf8');
}

/** A body that is either raw text or (JSON-parsed by the kit) a JSON string. */
export async function textBody(ctx: HandlerContext): Promise<string> {
  if (typeof ctx.body === 'string') return ctx.body;
  if (ctx.body !== undefined && ctx.body !== null) return '';
  return readRawBody(ctx.req);
}

export function parseDate(value: string): Date {
  return new Date(value);
}
