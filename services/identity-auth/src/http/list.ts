import { listEnvelope } from '@ziti/errors';
import type { HandlerContext, HandlerResult } from '@ziti/http-kit';
import type { ListRequest, Page } from '../domain/model.js';

/** math.MaxInt64, as the controller reports an unlimited page size (§4.1). */
const MAX_INT64_DIGITS = '9223372036854775807';
const MARKER = `__ziti_max_int64_${Math.random().toString(36).slice(2)}__`;

/** A single-valued query parameter (the first, when repeated). */
export function queryString(ctx: HandlerContext, name: string): string | undefined {
  const v = ctx.query[name];
  const first = Array.isArray(v) ? v[0] : v;
  return typeof first === 'string' ? first : undefined;
}

/** A repeatable query parameter. */
export function queryStrings(ctx: HandlerContext, name: string): string[] {
  const v = ctx.query[name];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');
}

export function listRequest(ctx: HandlerContext): ListRequest {
  return {
    filter: queryString(ctx, 'filter'),
    limit: queryString(ctx, 'limit'),
    offset: queryString(ctx, 'offset'),
    sort: queryString(ctx, 'sort'),
  };
}

/**
 * The list envelope. An unlimited page reports limit 9223372036854775807, which a JS number
 * cannot hold (JSON.stringify would print 9223372036854776000): those bodies are rendered here
 * with the exact digits.
 */
export function listResult<T, W>(page: Page<T>, map: (item: T) => W): HandlerResult {
  const unlimited = !Number.isSafeInteger(page.limit);
  const body = listEnvelope(
    page.items.map(map),
    { limit: unlimited ? (MARKER as unknown as number) : page.limit, offset: page.offset, totalCount: page.totalCount },
    page.filterableFields,
  );
  if (!unlimited) return { body };
  // meta follows data, so the last occurrence is the pagination's (data can not forge it).
  const json = JSON.stringify(body);
  const at = json.lastIndexOf(`"limit":"${MARKER}"`);
  const raw = `${json.slice(0, at)}"limit":${MAX_INT64_DIGITS}${json.slice(at + `"limit":"${MARKER}"`.length)}`;
  return { raw, contentType: 'application/json; charset=utf-8' };
}
