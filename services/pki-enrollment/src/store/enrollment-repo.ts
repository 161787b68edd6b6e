import { ApiError } from '@ziti/errors';
import type { Pool } from 'pg';
import type { Enrollment, EnrollMethod, ListRequest, Page } from '../domain/model.js';
import type { EnrollmentRepository } from '../domain/ports.js';
import type { Prisma } from '../generated/prisma/client.js';
import { type Db, json, mapped } from './db.js';
import { inIdOrder, listIds } from './list-query.js';
import { ENROLLMENT_QUERY } from './query-schemas.js';

type Row = Prisma.EnrollmentGetPayload<object>;

function toEnrollment(r: Row): Enrollment {
  return {
    id: r.id,
    method: r.method as EnrollMethod,
    token: r.token,
    jwt: r.jwt,
    expiresAt: r.expiresAt,
    identityId: r.identityId,
    identityName: r.identityName,
    edgeRouterId: r.edgeRouterId,
    transitRouterId: r.transitRouterId,
    routerName: r.routerName,
    caId: r.caId,
    username: r.username,
    tags: json(r.tags),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

const onUnique = (method: string) => (text: string) =>
  /identity_method/.test(text) || /identity_id/.test(text)
    ? ApiError.of('ENROLLMENT_EXISTS', { message: `an enrollment for method ${method} already exists` })
    : ApiError.field('(root)', 'unique constraint violated');

export class PrismaEnrollmentRepository implements EnrollmentRepository {
  constructor(
    private readonly db: Db,
    private readonly pool: Pool,
  ) {}

  async findById(id: string): Promise<Enrollment | null> {
    const r = await this.db.enrollment.findUnique({ where: { id } });
    return r ? toEnrollment(r) : null;
  }

  async findByToken(token: string): Promise<Enrollment | null> {
    const r = await this.db.enrollment.findUnique({ where: { token } });
    return r ? toEnrollment(r) : null;
  }

  async lockByToken(token: string): Promise<Enrollment | null> {
    const locked = await this.db.$queryRaw<{ id: string }[]>`SELECT "id" FROM "enrollments" WHERE "token" = ${token} FOR UPDATE`;
    return locked.length > 0 ? this.findById(locked[0]!.id) : null;
  }

  async findByIdentity(identityId: string): Promise<Enrollment[]> {
    const rows = await this.db.enrollment.findMany({ where: { identityId }, orderBy: { createdAt: 'asc' } });
    return rows.map(toEnrollment);
  }

  async findByIdentities(identityIds: readonly string[]): Promise<Enrollment[]> {
    if (identityIds.length === 0) return [];
    const rows = await this.db.enrollment.findMany({ where: { identityId: { in: [...identityIds] } }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
    return rows.map(toEnrollment);
  }

  async findByRouter(routerId: string): Promise<Enrollment | null> {
    const r = await this.db.enrollment.findFirst({ where: { OR: [{ edgeRouterId: routerId }, { transitRouterId: routerId }] } });
    return r ? toEnrollment(r) : null;
  }

  async list(req: ListRequest, identityId?: string): Promise<Page<Enrollment>> {
    const page = await listIds(this.pool, ENROLLMENT_QUERY, req, identityId ? { column: 'identity_id', value: identityId } : undefined);
    const rows = page.ids.length > 0 ? await this.db.enrollment.findMany({ where: { id: { in: page.ids } } }) : [];
    return { ...page, items: inIdOrder(page.ids, rows).map(toEnrollment) };
  }

  async create(e: Omit<Enrollment, 'createdAt' | 'updatedAt' | 'tags'>): Promise<void> {
    await mapped(() => this.db.enrollment.create({ data: { ...e } }), onUnique(e.method));
  }

  async update(id: string, fields: { token: string; jwt: string; expiresAt: Date }): Promise<void> {
    await this.db.enrollment.update({ where: { id }, data: { ...fields, updatedAt: new Date() } });
  }

  async delete(id: string): Promise<boolean> {
    return (await this.db.enrollment.deleteMany({ where: { id } })).count > 0;
  }

  async deleteByIdentity(identityId: string): Promise<number> {
    return (await this.db.enrollment.deleteMany({ where: { identityId } })).count;
  }

  async deleteByRouter(routerId: string): Promise<number> {
    return (await this.db.enrollment.deleteMany({ where: { OR: [{ edgeRouterId: routerId }, { transitRouterId: routerId }] } })).count;
  }
}
