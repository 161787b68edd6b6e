import {
  type EntityQuerySchema,
  type IdPage,
  LIST_ALIAS,
  type ListCondition,
  compileListQuery,
  filterableFields,
  listIds as listPage,
  shiftPlaceholders,
} from '@ziti/http-kit';
import type { ListRequest } from '../domain/model.js';
import type { Sql } from './db.js';
import { REGISTRY } from './query-schemas.js';

/** An extra condition over alias "e", placeholders numbered from $1 (renumbered by the kit). */
export type Condition = ListCondition;

export { inIdOrder, type IdPage } from '@ziti/http-kit';

const ALIAS = LIST_ALIAS;

/** Shifts `$n` placeholders by `by`. */
export const shift = shiftPlaceholders;

/**
 * Runs a list request (ZitiQL filter, sort, paging) over one entity table, optionally narrowed by
 * `extra`, and returns the page's ids in order and the total match count.
 */
export function listIds(sql: Sql, schema: EntityQuerySchema, req: ListRequest, extra?: Condition): Promise<IdPage> {
  return listPage(sql, schema, req, { extra, registry: REGISTRY });
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

/** `e.id IN (SELECT <col> FROM <table> WHERE <key> = $1)`: entities linked to one owner. */
export function linkedTo(table: string, key: string, col: string, ownerId: string, more = ''): Condition {
  return { sql: `"e"."id" IN (SELECT x."${col}" FROM "${table}" x WHERE x."${key}" = $1 ${more})`, params: [ownerId] };
}
