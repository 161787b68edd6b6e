import { type EntityQuerySchema, type IdPage, LIST_ALIAS, listIds as listPage } from '@ziti/http-kit';
import type { Pool } from 'pg';
import type { ListRequest } from '../domain/model.js';

export { inIdOrder, type IdPage } from '@ziti/http-kit';

/**
 * A list request (ZitiQL filter, sort, paging) against one table, optionally scoped by an extra
 * `column = value` condition: the page's ids in order and the total count.
 */
export function listIds(pool: Pool, schema: EntityQuerySchema, req: ListRequest, scope?: { column: string; value: string }): Promise<IdPage> {
  const extra = scope ? { sql: `"${LIST_ALIAS}"."${scope.column}" = $1`, params: [scope.value] } : undefined;
  return listPage(pool, schema, req, { extra });
}
