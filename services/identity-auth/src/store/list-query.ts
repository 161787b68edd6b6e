import { type EntityQuerySchema, type IdPage, type ListCondition, listIds as listPage } from '@ziti/http-kit';
import type { Pool } from 'pg';
import type { ListRequest } from '../domain/model.js';

export { inIdOrder, type IdPage } from '@ziti/http-kit';

/** An extra condition over alias "e", placeholders numbered from $1. */
export type ExtraCondition = ListCondition;

/** A list request (ZitiQL filter, sort, paging) against one table: the page's ids and the total count. */
export function listIds(pool: Pool, schema: EntityQuerySchema, req: ListRequest, extra?: ExtraCondition): Promise<IdPage> {
  return listPage(pool, schema, req, { extra });
}
