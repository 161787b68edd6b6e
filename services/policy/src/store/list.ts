import { type EntityQuerySchema, compileListQuery, filterableFields } from '@ziti/http-kit';
import type { ListRequest } from '../domain/model.js';
import type { Sql } from './db.js';
import { REGISTRY } from './query-schemas.js';

/** An extra condition over alias "e", placeholders numbered from $1 (renumbered here). */
export interface Condition {
  sql: string;
  params: unknown[];
}

export interface IdPage {
  ids: string[];
  totalCount: number;
  limit: number;
  offset: number;
  filterableFields: string[];
}

const ALIAS = 'e';

/** Shifts `$n` placeholders by `by`. */
export function shift(sql: string, by: number): string {
  return by === 0 ? sql : sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + by}`);
}

/**
 * Runs a list request (ZitiQL filter, sort, paging) over one entity table, optionally narrowed by
 * `extra`, and returns the page's ids in order and the total match count.
 */
export async function listIds(sql: Sql, schema: EntityQuerySchema, req: ListRequest, extra?: Condition): Promise<IdPage> {
  const q = compileListQuery(req, schema, { alias: ALIAS, registry: REGISTRY });
  let where = q.where;
  const params = [...q.params];
  if (extra) {
    where = `(${where}) AND (${shift(extra.sql, params.length)})`;
    params.push(...extra.params);
  }
  const from = `FROM ${schema.table} AS "${ALIAS}" WHERE ${where}`;
  const paging: string[] = [];
  if (q.limit !== null) paging.push(`LIMIT ${q.limit}`);
  if (q.offset > 0) paging.push(`OFFSET ${q.offset}`);
  const [rows, count] = await Promise.all([
    sql.query<{ id: string }>(`SELECT "${ALIAS}"."id" AS id ${from} ORDER BY ${q.orderBy} ${paging.join(' ')}`, params),
    sql.query<{ n: string }>(`SELECT count(*) AS n ${from}`, params),
  ]);
  return {
    ids: rows.rows.map((r) => r.id),
    totalCount: Number(count.rows[0]?.n ?? 0),
    limit: q.pagination.limit,
    offset: q.pagination.offset,
    filterableFields: filterableFields(schema),
  };
}

/**
 * A list request answered in one round trip for the rows (and one, concurrent, for the count):
 * `rowsFor(idsSql)` selects the rows for the ids of `idsSql` (an SQL array expression in page
 * order), exposing the page position as column "ord"; rows come back in page order.
 */
export async function listRows<R>(sql: Sql, schema: EntityQuerySchema, req: ListRequest, extra: Condition | undefined, rowsFor: (idsSql: string) => string): Promise<IdPage & { rows: R[] }> {
  const q = compileListQuery(req, schema, { alias: ALIAS, registry: REGISTRY });
  let where = q.where;
  const params = [...q.params];
  if (extra) {
    where = `(${where}) AND (${shift(extra.sql, params.length)})`;
    params.push(...extra.params);
  }
  const from = `FROM ${schema.table} AS "${ALIAS}" WHERE ${where}`;
  const paging = `${q.limit !== null ? `LIMIT ${q.limit}` : ''} ${q.offset > 0 ? `OFFSET ${q.offset}` : ''}`;
  const idsSql = `ARRAY(SELECT "${ALIAS}"."id" ${from} ORDER BY ${q.orderBy} ${paging})`;
  const [rows, count] = await Promise.all([
    sql.query(`${rowsFor(idsSql)} ORDER BY "ord"`, params),
    sql.query<{ n: string }>(`SELECT count(*) AS n ${from}`, params),
  ]);
  return {
    ids: rows.rows.map((r) => r.id),
    rows: rows.rows as R[],
    totalCount: Number(count.rows[0]?.n ?? 0),
    limit: q.pagination.limit,
    offset: q.pagination.offset,
    filterableFields: filterableFields(schema),
  };
}

/** Orders loaded rows as the page's ids. */
export function inIdOrder<T extends { id: string }>(ids: readonly string[], rows: readonly T[]): T[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    return r ? [r] : [];
  });
}

/** `e.id IN (SELECT <col> FROM <table> WHERE <key> = $1)`: entities linked to one owner. */
export function linkedTo(table: string, key: string, col: string, ownerId: string, more = ''): Condition {
  return { sql: `"e"."id" IN (SELECT x."${col}" FROM "${table}" x WHERE x."${key}" = $1 ${more})`, params: [ownerId] };
}
