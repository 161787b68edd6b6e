import type { Pool } from 'pg';
import type { IdentityType, ListRequest, Page } from '../domain/model.js';
import type { IdentityTypeRepository } from '../domain/ports.js';
import type { Prisma } from '../generated/prisma/client.js';
import { type Db, json } from './db.js';
import { inIdOrder, listIds } from './list-query.js';
import { IDENTITY_TYPE_QUERY } from './query-schemas.js';

const toIdentityType = (r: Prisma.IdentityTypeGetPayload<object>): IdentityType => ({
  id: r.id,
  name: r.name,
  tags: json(r.tags),
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

export class PrismaIdentityTypeRepository implements IdentityTypeRepository {
  constructor(
    private readonly db: Db,
    private readonly pool: Pool,
  ) {}

  async findById(id: string): Promise<IdentityType | null> {
    const r = await this.db.identityType.findUnique({ where: { id } });
    return r ? toIdentityType(r) : null;
  }

  async list(req: ListRequest): Promise<Page<IdentityType>> {
    const page = await listIds(this.pool, IDENTITY_TYPE_QUERY, req);
    const rows = page.ids.length > 0 ? await this.db.identityType.findMany({ where: { id: { in: page.ids } } }) : [];
    return { ...page, items: inIdOrder(page.ids, rows).map(toIdentityType) };
  }
}
