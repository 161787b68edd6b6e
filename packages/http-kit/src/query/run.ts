import { compileListQuery } from './list-query.js';
import { type EntityQuerySchema, type SchemaRegistry, filterableFields } from './schema.js';

/** The part of a pg Pool / PoolClient that a list needs (so the kit needs no pg dependency). */
export interface Queryable {
  query(text: string, params?: unknown[]): Promise<{ rows: any[] }>;
}

/** An extra condition over alias "e", with placeholders numbered from $1 (renumbered here). */
export interface ListCondition {
  sql: string;
  params: unknown[];
}

/** One page of a list: its ids in page order, the total match count and the list meta. */
export interface IdPage {
  ids: string[];
  totalCount: number;
  limit: number;
  offset: number;
  filterableFields: string[];
}

/** The table alias a list's symbols and conditions are written against. */
export const LIST_ALIAS = 'e';

/** Shifts `$n` placeholders by `by`. */
export function shiftPlaceholders(sql: string, by: number): string {
  return by === 0 ? sql : sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + by}`);
}

/**
 * Runs a list request (ZitiQL filter, sort, paging) over one entity table, optionally narrowed by
 * `extra`, and returns the page's ids in order and the total match count (two concurrent
 * statements). The caller loads the rows for the ids (see `inIdOrder`).
 */
export async function listIds(
  db: Queryable,
  schema: EntityQuerySchema,
  req: { filter?: string; limit?: string | number; offset?: string | number; sort?: string },
  opts: { extra?: ListCondition; registry?: SchemaRegistry } = {},
): Promise<IdPage> {
  const q = compileListQuery(req, schema, { alias: LIST_ALIAS, registry: opts.registry });
  let where = q.where;
  const params = [...q.params];
  if (opts.extra) {
    where = `(${where}) AND (${shiftPlaceholders(opts.extra.sql, params.length)})`;
    params.push(...opts.extra.params);
  }
  const from = `FROM ${schema.table} AS "${LIST_ALIAS}" WHERE ${where}`;
  const paging: string[] = [];
  if (q.limit !== null) paging.push(`LIMIT ${q.limit}`);
  if (q.offset > 0) paging.push(`OFFSET ${q.offset}`);
  const [rows, count] = await Promise.all([
    db.query(`SELECT "${LIST_ALIAS}"."id" AS id ${from} ORDER BY ${q.orderBy} ${paging.join(' ')}`, params),
    db.query(`SELECT count(*) AS n ${from}`, params),
  ]);
  return {
    ids: rows.rows.map((r: { id: string }) => r.id),
    totalCount: Number(count.rows[0]?.n ?? 0),
    limit: q.pagination.limit,
    offset: q.pagination.offset,
    filterableFields: filterableFields(schema),
  };
}

/** Orders loaded rows as the page's ids (ids without a row are dropped). */
export function inIdOrder<T extends { id: string }>(ids: readonly string[], rows: readonly T[]): T[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    return r ? [r] : [];
  });
}
