import { ApiError } from '@ziti/errors';
import type { ZitiQlQuery, ZitiQlSortField } from './ast.js';
import { type CompileOptions, compileWhere, newContext, sortFieldSql } from './compile.js';
import { invalidFilter, invalidPagination, invalidSort } from './errors.js';
import { parseSortFields, parseZitiQl } from './parser.js';
import { type EntityQuerySchema, ownSymbol, quoteIdent } from './schema.js';

/** Page size when none (or 0, or below -1) is given. */
export const LIST_LIMIT_DEFAULT = 10;
/** Largest page size; larger limits are lowered to it. */
export const LIST_LIMIT_MAX = 500;
/** Largest offset; larger offsets are lowered to it. */
export const LIST_OFFSET_MAX = 100000;
/**
 * `meta.pagination.limit` when the limit is -1 or `limit none`: the controller reports math.MaxInt64,
 * 9223372036854775807. A JS number can not hold it exactly (it holds 2^63, which JSON.stringify
 * renders as 9223372036854776000); the response renderer must write the exact digits.
 */
export const UNLIMITED = 9223372036854775807;
/** At most this many sort fields are used (the controller's SortMax); further ones are dropped. */
const SORT_MAX = 5;
const INT64 = /^[+-]?[0-9]+$/;

/** The list query parameters, as they arrive (`?filter=…&limit=…&offset=…&sort=…`). */
export interface ListParams {
  filter?: string;
  limit?: string | number;
  offset?: string | number;
  sort?: string;
}

export interface CompiledListQuery {
  /** SQL boolean expression over the alias, 'TRUE' when no filter. */
  where: string;
  /** Bound values for $(paramOffset+1)…: Dates for datetimes, numbers, strings, booleans, string[] for map keys. */
  params: unknown[];
  /** e.g. '"e"."name" DESC, "e"."id" ASC'; always ends with the id ascending. */
  orderBy: string;
  /** null = unlimited. */
  limit: number | null;
  offset: number;
  /** What meta.pagination reports (limit UNLIMITED when unlimited). */
  pagination: { limit: number; offset: number };
}

/**
 * Compiles a list request: filter, sort and paging (Edge API §4.1).
 * - The filter's `sort by`, `skip` and `limit` win over the `sort`, `offset` and `limit` parameters
 *   (each independently: a filter with only `skip` still takes the `limit` parameter).
 * - Errors: anything wrong in the filter (including its `sort by`) → INVALID_FILTER; a non-integer
 *   limit/offset parameter → INVALID_PAGINATION (even when the filter overrides it, as the controller
 *   parses them first); a bad `sort` parameter → INVALID_SORT_IDENTIFIER (only when it is used).
 * - limit: absent, 0 or < -1 → 10; > 500 → 500; -1 or `limit none` → unlimited.
 *   offset: absent or < 0 → 0; > 100000 → 100000.
 * - Order: at most 5 fields, then the id ascending unless already sorted by id.
 */
export function compileListQuery(params: ListParams, schema: EntityQuerySchema, opts: CompileOptions = {}): CompiledListQuery {
  const query: ZitiQlQuery = params.filter ? parseZitiQl(params.filter) : {};
  const { ctx, scope } = newContext(opts);
  const root = scope(schema);
  const where = compileWhere(query, root, ctx);

  let sort: ZitiQlSortField[];
  let sortError: (message: string) => ApiError;
  if (query.sort) {
    sort = query.sort;
    sortError = invalidFilter;
  } else {
    sort = parseSortParam(params.sort);
    sortError = invalidSort;
  }
  const order = sort.map((f) => {
    const sql = sortFieldSql(schema, f.field, root.alias);
    if (typeof sql !== 'string') throw sortError(sql.error);
    return `${sql} ${f.direction === 'desc' ? 'DESC' : 'ASC'}`;
  });
  order.splice(SORT_MAX);
  const byId = sort.slice(0, SORT_MAX).some((f) => f.field === 'id');
  if (!byId) {
    const id = ownSymbol(schema, 'id');
    const idSql = id?.kind === 'scalar' ? id.sql(root.alias) : `${root.alias}.${quoteIdent(schema.idColumn ?? 'id')}`;
    order.push(`${idSql} ASC`);
  }

  const paramLimit = paginationParam('limit', params.limit);
  const paramOffset = paginationParam('offset', params.offset);
  const rawLimit = query.limit === undefined ? paramLimit : query.limit === 'none' ? -1 : query.limit;
  const rawOffset = query.skip ?? paramOffset;
  const limit = normaliseLimit(rawLimit);
  const offset = normaliseOffset(rawOffset);
  return {
    where,
    params: ctx.params,
    orderBy: order.join(', '),
    limit,
    offset,
    pagination: { limit: limit ?? UNLIMITED, offset },
  };
}

/**
 * Just the filter's boolean expression, for callers that add their own conditions ('TRUE' for an
 * empty filter). A `sort by`, `skip` or `limit` in the filter is checked for syntax and ignored.
 */
export function compileFilter(
  filter: string,
  schema: EntityQuerySchema,
  opts: CompileOptions = {},
): { where: string; params: unknown[] } {
  const { ctx, scope } = newContext(opts);
  const where = compileWhere(parseZitiQl(filter), scope(schema), ctx);
  return { where, params: ctx.params };
}

/** `sort=name desc, createdAt`: errors become INVALID_SORT_IDENTIFIER. */
function parseSortParam(sort: string | undefined): ZitiQlSortField[] {
  if (sort === undefined) return [];
  try {
    return parseSortFields(sort);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'INVALID_FILTER') throw invalidSort(err.cause?.message ?? err.message);
    throw err;
  }
}

/** A query-parameter limit or offset as an int64, or undefined when absent. */
function paginationParam(name: string, v: string | number | undefined): number | undefined {
  if (v === undefined || v === '') return undefined;
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) throw invalidPagination(`${name} must be an integer: ${v}`);
    return v;
  }
  if (!INT64.test(v)) throw invalidPagination(`${name} must be an integer: ${v.slice(0, 64)}`);
  const big = BigInt(v);
  if (big < -(2n ** 63n) || big > 2n ** 63n - 1n) throw invalidPagination(`${name} is out of range: ${v.slice(0, 64)}`);
  return Number(big);
}

/** The effective limit; null = unlimited. */
export function normaliseLimit(limit: number | undefined): number | null {
  if (limit === -1) return null;
  if (limit === undefined || limit === 0 || limit < -1) return LIST_LIMIT_DEFAULT;
  return Math.min(limit, LIST_LIMIT_MAX);
}

export function normaliseOffset(offset: number | undefined): number {
  if (offset === undefined || offset < 0) return 0;
  return Math.min(offset, LIST_OFFSET_MAX);
}
