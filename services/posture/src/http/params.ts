import { ApiError, listEnvelope } from '@ziti/errors';
import type { HandlerContext, HandlerResult } from '@ziti/http-kit';
import type { ListRequest, Page, RoleFilter } from '../domain/model.js';

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

/** The list envelope (an unlimited page's limit is written as 9223372036854775807 by the kit). */
export function listResult<T, W>(page: Page<T>, map: (item: T) => W): HandlerResult {
  return { body: listEnvelope(page.items.map(map), { limit: page.limit, offset: page.offset, totalCount: page.totalCount }, page.filterableFields) };
}

/** `roleFilter` (repeatable: `#attr`, `@id`, `#all`) and `roleSemantic` (§4.1); undefined without roleFilter. */
export function roleFilter(ctx: HandlerContext): RoleFilter | undefined {
  const values = queryStrings(ctx, 'roleFilter');
  if (values.length === 0) return undefined;
  const semantic = queryString(ctx, 'roleSemantic');
  let sem: RoleFilter['semantic'];
  if (semantic === undefined || semantic === '' || semantic === 'AllOf') sem = 'AllOf';
  else if (semantic === 'AnyOf') sem = 'AnyOf';
  else throw ApiError.field('roleSemantic', 'roleSemantic should be one of [AllOf AnyOf]', semantic);
  const filter: RoleFilter = { ids: [], attributes: [], all: false, semantic: sem };
  for (const v of values) {
    if (v === '#all') filter.all = true;
    else if (v.startsWith('#') && v.length > 1) filter.attributes.push(v.slice(1));
    else if (v.startsWith('@') && v.length > 1) filter.ids.push(v.slice(1));
    else throw ApiError.field('roleFilter', 'role entries must prefixed with # (to indicate role attributes) or @ (to indicate a name or id)', v);
  }
  return filter;
}
