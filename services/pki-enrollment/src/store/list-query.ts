import { type EntityQuerySchema, compileListQuery, filterableFields } from '@ziti/http-kit';
import type { Pool } from 'pg';
import type { ListRequest } from '../domain/model.js';

export interface IdPage {
  ids: string[];
  totalCount: number;
  limit: number;
  offset: number;
  filterableFields: string[];
}

const ALIAS = 'e';

/**
 * A list request (ZitiQL filter, sort, paging) against one table, optionally scoped by an extra
 * `column = value` condition: the page's ids in order and the total count.
 */
export async function listIds(pool: Pool, schema: EntityQuerySchema, req: ListRequest, scope?: { column: string; value: string }): Promise<IdPage> {
  const q = compileListQuery(req, schema, { alias: ALIAS });
  const params = [...q.params];
  let where = q.where;
  if (scope) {
    params.push(scope.value);
    where = `(${where}) AND "${ALIAS}"."${scope.column}" = $${params.length}`;
  }
  const from = `FROM ${schema.table} AS "${ALIAS}" WHERE ${where}`;
  const paging: string[] = [];
  if (q.limit !== null) paging.push(`LIMIT ${q.limit}`);
  if (q.offset > 0) paging.push(`OFFSET ${q.offset}`);
  const [rows, count] = await Promise.all([
    pool.query<{ id: string }>(`SELECT "${ALIAS}"."id" AS id ${from} ORDER BY ${q.orderBy} ${paging.join(' ')}`, params),
    pool.query<{ n: string }>(`SELECT count(*) AS n ${from}`, params),
  ]);
  return {
    ids: rows.rows.map((r) => r.id),
    totalCount: Number(count.rows[0]?.n ?? 0),
    limit: q.pagination.limit,
    offset: q.pagination.offset,
    filterableFields: filterableFields(schema),
  };
}

/** Orders loaded rows as the page's ids. */
export function inIdOrder<T extends { id: string }>(ids: string[], rows: T[]): T[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    return r ? [r] : [];
  });
}
