import { ApiError, listEnvelope } from '@ziti/errors';
import type { HandlerContext, HandlerResult, RequestPrincipal } from '@ziti/http-kit';
import type { Viewer } from '../domain/access-manager.js';
import type { ListRequest, Page, PolicyType } from '../domain/model.js';

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
  return { filter: queryString(ctx, 'filter'), limit: queryString(ctx, 'limit'), offset: queryString(ctx, 'offset'), sort: queryString(ctx, 'sort') };
}

/** The list envelope (the unlimited page size is written exactly by the kit's JSON writer). */
export function listResult<T, W>(page: Page<T>, map: (item: T) => W): HandlerResult {
  return { body: listEnvelope(page.items.map(map), { limit: page.limit, offset: page.offset, totalCount: page.totalCount }, page.filterableFields) };
}

/** `policyType=dial|bind` (case-insensitive); anything else means both. */
export function policyType(ctx: HandlerContext): PolicyType | undefined {
  const v = queryString(ctx, 'policyType')?.toLowerCase();
  return v === 'dial' ? 'Dial' : v === 'bind' ? 'Bind' : undefined;
}

export function viewer(ctx: HandlerContext): Viewer {
  const p = ctx.principal as RequestPrincipal | undefined;
  if (!p) throw ApiError.of('UNAUTHORIZED');
  return { identityId: p.identityId, apiSessionId: p.apiSessionId, sessionConfigTypes: p.configTypes ?? [], mfaCompletedAt: p.mfaCompletedAt };
}

export const id = (ctx: HandlerContext): string => ctx.params.id!;
