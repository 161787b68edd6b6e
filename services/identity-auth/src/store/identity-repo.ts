import type { Pool } from 'pg';
import type { Identity, IdentityFields, IdentityView, ListRequest, Page, RoleFilter } from '../domain/model.js';
import type { IdentityRepository, NewIdentity } from '../domain/ports.js';
import type { Prisma } from '../generated/prisma/client.js';
import { type Db, json, mapped } from './db.js';
import { type ExtraCondition, inIdOrder, listIds } from './list-query.js';
import { IDENTITY_QUERY } from './query-schemas.js';

type IdentityRow = Prisma.IdentityGetPayload<object>;

const VIEW_INCLUDE = {
  type: { select: { name: true } },
  authPolicy: { select: { name: true } },
  authenticators: { select: { id: true, method: true, username: true, fingerprint: true }, orderBy: { createdAt: 'asc' } },
  _count: { select: { apiSessions: true } },
} as const satisfies Prisma.IdentityInclude;

type ViewRow = Prisma.IdentityGetPayload<{ include: typeof VIEW_INCLUDE }>;

export function toIdentity(r: IdentityRow): Identity {
  return {
    id: r.id,
    name: r.name,
    typeId: r.typeId,
    isAdmin: r.isAdmin,
    isDefaultAdmin: r.isDefaultAdmin,
    isSystem: r.isSystem,
    roleAttributes: r.roleAttributes ?? [],
    tags: json(r.tags),
    appData: json(r.appData),
    authPolicyId: r.authPolicyId,
    externalId: r.externalId,
    defaultHostingPrecedence: r.defaultHostingPrecedence,
    defaultHostingCost: r.defaultHostingCost,
    serviceHostingPrecedences: json(r.serviceHostingPrecedences) as Record<string, string>,
    serviceHostingCosts: json(r.serviceHostingCosts) as Record<string, number>,
    permissions: r.permissions ?? [],
    sdkInfo: json(r.sdkInfo),
    envInfo: json(r.envInfo),
    disabled: r.disabled,
    disabledAt: r.disabledAt,
    disabledUntil: r.disabledUntil,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

function toView(r: ViewRow): IdentityView {
  const updb = r.authenticators.find((a) => a.method === 'updb');
  const cert = r.authenticators.find((a) => a.method === 'cert');
  return {
    ...toIdentity(r),
    typeName: r.type.name,
    authPolicyName: r.authPolicy.name,
    hasApiSession: r._count.apiSessions > 0,
    updb: updb ? { id: updb.id, username: updb.username ?? '' } : null,
    cert: cert ? { id: cert.id, fingerprint: cert.fingerprint ?? '' } : null,
  };
}

function data(f: IdentityFields) {
  return {
    name: f.name,
    typeId: f.typeId,
    isAdmin: f.isAdmin,
    roleAttributes: f.roleAttributes,
    tags: f.tags as Prisma.InputJsonObject,
    appData: f.appData as Prisma.InputJsonObject,
    authPolicyId: f.authPolicyId,
    externalId: f.externalId,
    defaultHostingPrecedence: f.defaultHostingPrecedence,
    defaultHostingCost: f.defaultHostingCost,
    serviceHostingPrecedences: f.serviceHostingPrecedences as Prisma.InputJsonObject,
    serviceHostingCosts: f.serviceHostingCosts as Prisma.InputJsonObject,
    permissions: f.permissions,
  };
}

/** `roleFilter` as SQL over alias "e" (§4.1): `@` ids OR the `#` attributes under the semantic. */
function roleCondition(rf: RoleFilter): ExtraCondition {
  if (rf.all) return { sql: 'TRUE', params: [] };
  const parts: string[] = [];
  const params: unknown[] = [];
  if (rf.ids.length > 0) {
    params.push(rf.ids);
    parts.push(`"e"."id" = ANY($${params.length}::text[])`);
  }
  if (rf.attributes.length > 0) {
    params.push(rf.attributes);
    parts.push(`"e"."role_attributes" ${rf.semantic === 'AnyOf' ? '&&' : '@>'} $${params.length}::text[]`);
  }
  return { sql: parts.length > 0 ? parts.join(' OR ') : 'FALSE', params };
}

export class PrismaIdentityRepository implements IdentityRepository {
  constructor(
    private readonly db: Db,
    private readonly pool: Pool,
  ) {}

  async findById(id: string): Promise<Identity | null> {
    const r = await this.db.identity.findUnique({ where: { id } });
    return r ? toIdentity(r) : null;
  }

  async findByIdForUpdate(id: string): Promise<Identity | null> {
    const locked = await this.db.$queryRaw<{ id: string }[]>`SELECT "id" FROM "identities" WHERE "id" = ${id} FOR UPDATE`;
    return locked.length > 0 ? this.findById(id) : null;
  }

  async view(id: string): Promise<IdentityView | null> {
    const r = await this.db.identity.findUnique({ where: { id }, include: VIEW_INCLUDE });
    return r ? toView(r) : null;
  }

  async list(req: ListRequest, roleFilter?: RoleFilter): Promise<Page<IdentityView>> {
    const page = await listIds(this.pool, IDENTITY_QUERY, req, roleFilter ? roleCondition(roleFilter) : undefined);
    const rows = page.ids.length > 0 ? await this.db.identity.findMany({ where: { id: { in: page.ids } }, include: VIEW_INCLUDE }) : [];
    return { ...page, items: inIdOrder(page.ids, rows).map(toView) };
  }

  async create(identity: NewIdentity): Promise<void> {
    await mapped(
      () => this.db.identity.create({ data: { ...data(identity), id: identity.id, isDefaultAdmin: identity.isDefaultAdmin } }),
      (f) => (f === 'externalId' ? identity.externalId : identity.name),
    );
  }

  async update(id: string, fields: IdentityFields): Promise<void> {
    await mapped(
      () => this.db.identity.update({ where: { id }, data: { ...data(fields), updatedAt: new Date() } }),
      (f) => (f === 'externalId' ? fields.externalId : fields.name),
    );
  }

  async updateInfo(id: string, info: { sdkInfo?: Record<string, unknown>; envInfo?: Record<string, unknown> }): Promise<void> {
    await this.db.identity.update({
      where: { id },
      data: {
        ...(info.sdkInfo !== undefined ? { sdkInfo: info.sdkInfo as Prisma.InputJsonObject } : {}),
        ...(info.envInfo !== undefined ? { envInfo: info.envInfo as Prisma.InputJsonObject } : {}),
      },
    });
  }

  async disable(id: string, until: Date | null): Promise<void> {
    const now = new Date();
    await this.db.identity.update({ where: { id }, data: { disabled: true, disabledAt: now, disabledUntil: until, updatedAt: now } });
  }

  async delete(id: string): Promise<void> {
    await this.db.identity.delete({ where: { id } });
  }

  async findDefaultAdmin(): Promise<Identity | null> {
    const r = await this.db.identity.findFirst({ where: { isDefaultAdmin: true }, orderBy: { createdAt: 'asc' } });
    return r ? toIdentity(r) : null;
  }
}
