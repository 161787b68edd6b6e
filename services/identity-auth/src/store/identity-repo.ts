import type { Pool } from 'pg';
import type { Identity, IdentityFields, IdentityView, ListRequest, Page, RoleFilter, IdentityTrace } from '../domain/model.js';
import type { IdentityRepository, NewIdentity } from '../domain/ports.js';
import type { Prisma } from '../generated/prisma/client.js';
import { type Db, json, mapped } from './db.js';
import { type ExtraCondition, inIdOrder, listIds } from './list-query.js';
import { IDENTITY_QUERY, ROLE_ATTRIBUTE_QUERY } from './query-schemas.js';
import { compileListQuery, filterableFields } from '@ziti/http-kit';

type IdentityRow = Prisma.IdentityGetPayload<object>;

const VIEW_INCLUDE = {
  type: { select: { name: true } },
  authPolicy: { select: { name: true } },
  authenticators: { select: { id: true, method: true, username: true, fingerprint: true }, orderBy: { createdAt: 'asc' } },
  mfa: { select: { isVerified: true } },
  _count: { select: { apiSessions: true } },
} as const satisfies Prisma.IdentityInclude;

type ViewRow = Prisma.IdentityGetPayload<{ include: typeof VIEW_INCLUDE }>;

/** The trace columns of an identity row (a trace needs its id and end). */
export function traceOf(traceId: string | null, until: Date | string | null, channels: string[] | null): IdentityTrace | null {
  return traceId && until ? { traceId, until: new Date(until), channels: channels ?? [] } : null;
}

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
    trace: traceOf(r.traceId, r.traceUntil, r.traceChannels),
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
    isMfaEnabled: r.mfa?.isVerified === true,
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

  async findByExternalId(externalId: string): Promise<Identity | null> {
    const r = await this.db.identity.findUnique({ where: { externalId } });
    return r ? toIdentity(r) : null;
  }

  async nameTaken(name: string): Promise<boolean> {
    return (await this.db.identity.count({ where: { name } })) > 0;
  }

  async view(id: string): Promise<IdentityView | null> {
    const r = await this.db.identity.findUnique({ where: { id }, include: VIEW_INCLUDE });
    return r ? toView(r) : null;
  }

  async views(ids: readonly string[]): Promise<IdentityView[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.identity.findMany({ where: { id: { in: [...ids] } }, include: VIEW_INCLUDE });
    return inIdOrder([...ids], rows).map(toView);
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

  /** Sets or clears the identity's trace (not a change of the identity: `updatedAt` stays); false when it does not exist. */
  async setTrace(id: string, trace: IdentityTrace | null): Promise<boolean> {
    const { count } = await this.db.identity.updateMany({
      where: { id },
      data: { traceId: trace?.traceId ?? null, traceUntil: trace?.until ?? null, traceChannels: trace?.channels ?? [] },
    });
    return count > 0;
  }

  async update(id: string, fields: IdentityFields): Promise<Identity> {
    const r = await mapped(
      () => this.db.identity.update({ where: { id }, data: { ...data(fields), updatedAt: new Date() } }),
      (f) => (f === 'externalId' ? fields.externalId : fields.name),
    );
    return toIdentity(r);
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

  async disable(id: string, minutes: number | null): Promise<Identity> {
    const now = new Date();
    const until = minutes === null ? null : new Date(now.getTime() + minutes * 60_000);
    const r = await this.db.identity.update({ where: { id }, data: { disabled: true, disabledAt: now, disabledUntil: until, updatedAt: now } });
    return toIdentity(r);
  }

  async enable(id: string): Promise<Identity> {
    const r = await this.db.identity.update({ where: { id }, data: { disabled: false, disabledAt: null, disabledUntil: null, updatedAt: new Date() } });
    return toIdentity(r);
  }

  async enableExpired(now: Date, max: number): Promise<Identity[]> {
    const ids = await this.db.$queryRaw<{ id: string }[]>`
      UPDATE "identities" SET "disabled" = false, "disabled_at" = NULL, "disabled_until" = NULL, "updated_at" = ${now}
      WHERE "id" IN (
        SELECT "id" FROM "identities" WHERE "disabled" AND "disabled_until" IS NOT NULL AND "disabled_until" <= ${now}
        LIMIT ${max} FOR UPDATE SKIP LOCKED)
      RETURNING "id"`;
    if (ids.length === 0) return [];
    const rows = await this.db.identity.findMany({ where: { id: { in: ids.map((r) => r.id) } } });
    return rows.map(toIdentity);
  }

  async delete(id: string): Promise<void> {
    await this.db.identity.delete({ where: { id } });
  }

  async findDefaultAdmin(): Promise<Identity | null> {
    const r = await this.db.identity.findFirst({ where: { isDefaultAdmin: true }, orderBy: { createdAt: 'asc' } });
    return r ? toIdentity(r) : null;
  }

  async idsWithAuthPolicy(authPolicyId: string, max: number): Promise<string[]> {
    const rows = await this.db.identity.findMany({ where: { authPolicyId }, select: { id: true }, take: max, orderBy: { id: 'asc' } });
    return rows.map((r) => r.id);
  }

  async listRoleAttributes(req: ListRequest, extra: string[] = []): Promise<Page<string>> {
    const q = compileListQuery(req, ROLE_ATTRIBUTE_QUERY, { alias: 'e', paramOffset: 1 });
    const from = `FROM ${ROLE_ATTRIBUTE_QUERY.table} AS "e" WHERE ${q.where}`;
    const paging = `${q.limit !== null ? `LIMIT ${q.limit}` : ''} ${q.offset > 0 ? `OFFSET ${q.offset}` : ''}`;
    const params = [extra, ...q.params];
    const [rows, count] = await Promise.all([
      this.pool.query<{ id: string }>(`SELECT "e"."id" AS id ${from} ORDER BY ${q.orderBy} ${paging}`, params),
      this.pool.query<{ n: string }>(`SELECT count(*) AS n ${from}`, params),
    ]);
    return {
      items: rows.rows.map((r) => r.id),
      totalCount: Number(count.rows[0]?.n ?? 0),
      limit: q.pagination.limit,
      offset: q.pagination.offset,
      filterableFields: filterableFields(ROLE_ATTRIBUTE_QUERY),
    };
  }

  async idsByRoleAttribute(attributes: string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>(attributes.map((a) => [a, []]));
    if (attributes.length === 0) return out;
    const rows = await this.pool.query<{ attr: string; id: string }>(
      `SELECT a AS attr, "id" FROM "identities", unnest("role_attributes") AS a WHERE a = ANY($1::text[]) ORDER BY "id"`,
      [attributes],
    );
    for (const r of rows.rows) out.get(r.attr)?.push(r.id);
    return out;
  }
}
