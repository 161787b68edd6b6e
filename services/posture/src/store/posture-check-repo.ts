import { type EntityQuerySchema, type QuerySymbol, compileListQuery, filterableFields } from '@ziti/http-kit';
import { newChangeEvent, outboxInsert } from '@ziti/messaging';
import type { Pool } from 'pg';
import type { ListRequest, Page, PostureCheck, PostureCheckData, PostureCheckTypeRecord, RoleFilter } from '../domain/model.js';
import type { PostureCheckEvent, PostureCheckStore } from '../domain/ports.js';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { EVENT_SOURCE } from '../events/events.js';
import { jsonObject, mapUnique } from './db.js';

const col = (type: 'string' | 'int' | 'bool' | 'datetime', column: string): QuerySymbol => ({ kind: 'scalar', type, sql: (a) => `${a}."${column}"` });
/** Entity names are stored NFC-normalised (`normalizeName`): filter literals compared with them are too. */
const NAME: QuerySymbol = { kind: 'scalar', type: 'string', sql: (a) => `${a}."name"`, nfc: true };

/** Public symbols of `/posture-checks` (§4.2). */
export const POSTURE_CHECK_QUERY: EntityQuerySchema = {
  entity: 'postureChecks',
  table: '"posture_checks"',
  symbols: {
    id: col('string', 'id'),
    createdAt: col('datetime', 'created_at'),
    updatedAt: col('datetime', 'updated_at'),
    tags: { kind: 'map', sql: (a) => `${a}."tags"` },
    isSystem: { kind: 'scalar', type: 'bool', sql: () => 'FALSE' },
    name: NAME,
    typeId: col('string', 'type_id'),
    version: col('int', 'version'),
    roleAttributes: { kind: 'set', type: 'string', elements: (a) => `SELECT unnest(${a}."role_attributes") AS v` },
  },
};

export const POSTURE_CHECK_TYPE_QUERY: EntityQuerySchema = {
  entity: 'postureCheckTypes',
  table: '"posture_check_types"',
  symbols: {
    id: col('string', 'id'),
    createdAt: col('datetime', 'created_at'),
    updatedAt: col('datetime', 'updated_at'),
    tags: { kind: 'map', sql: () => `'{}'::jsonb` },
    isSystem: { kind: 'scalar', type: 'bool', sql: () => 'FALSE' },
    name: NAME,
  },
};

/** Role attributes are listed by their own value, the `id` symbol (§4.1). */
const ROLE_ATTRIBUTE_QUERY: EntityQuerySchema = { entity: 'roleAttributes', table: '', symbols: { id: col('string', 'id') } };

interface CheckRow {
  id: string;
  name: string;
  type_id: string;
  role_attributes: string[];
  tags: unknown;
  version: number;
  data: unknown;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = '"id", "name", "type_id", "role_attributes", "tags", "version", "data", "created_at", "updated_at"';

function toCheck(r: CheckRow): PostureCheck {
  return {
    id: r.id,
    name: r.name,
    roleAttributes: r.role_attributes ?? [],
    tags: jsonObject(r.tags),
    version: r.version,
    data: { ...jsonObject(r.data), typeId: r.type_id } as PostureCheckData,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function dataColumn(check: PostureCheck): Prisma.InputJsonObject {
  const { typeId: _typeId, ...rest } = check.data as Record<string, unknown>;
  return rest as Prisma.InputJsonObject;
}

function roleCondition(rf: RoleFilter): { sql: string; params: unknown[] } {
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

interface Listed<R> {
  rows: R[];
  totalCount: number;
  limit: number;
  offset: number;
}

/** Runs a compiled list query over `from` (aliased "e"), with an optional extra condition. */
async function runList<R>(pool: Pool, req: ListRequest, schema: EntityQuerySchema, from: (p: number) => { sql: string; params: unknown[] }, columns: string, extra?: { sql: string; params: unknown[] }): Promise<Listed<R>> {
  const q = compileListQuery(req, schema, { alias: 'e' });
  const params = [...q.params];
  const shift = (sql: string, extraParams: unknown[]) => {
    const base = params.length;
    params.push(...extraParams);
    return sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + base}`);
  };
  const source = from(0);
  const fromSql = shift(source.sql, source.params);
  const where = extra ? `(${q.where}) AND (${shift(extra.sql, extra.params)})` : q.where;
  const body = `FROM ${fromSql} AS "e" WHERE ${where}`;
  const paging = `${q.limit !== null ? `LIMIT ${q.limit}` : ''} ${q.offset > 0 ? `OFFSET ${q.offset}` : ''}`;
  const [rows, count] = await Promise.all([
    pool.query(`SELECT ${columns} ${body} ORDER BY ${q.orderBy} ${paging}`, params),
    pool.query<{ n: string }>(`SELECT count(*) AS n ${body}`, params),
  ]);
  return { rows: rows.rows as R[], totalCount: Number(count.rows[0]?.n ?? 0), limit: q.pagination.limit, offset: q.pagination.offset };
}

/** Posture checks and their types in Postgres; writes carry their outbox events in the same transaction. */
export class PostureCheckRepository implements PostureCheckStore {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly pool: Pool,
    private readonly afterCommit: () => void,
  ) {}

  async findById(id: string): Promise<PostureCheck | null> {
    const { rows } = await this.pool.query<CheckRow>(`SELECT ${COLUMNS} FROM "posture_checks" WHERE "id" = $1`, [id]);
    return rows[0] ? toCheck(rows[0]) : null;
  }

  async findByIds(ids: readonly string[]): Promise<PostureCheck[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.pool.query<CheckRow>(`SELECT ${COLUMNS} FROM "posture_checks" WHERE "id" = ANY($1::text[])`, [ids]);
    const byId = new Map(rows.map((r) => [r.id, toCheck(r)]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  async list(req: ListRequest, roleFilter?: RoleFilter): Promise<Page<PostureCheck>> {
    const r = await runList<CheckRow>(this.pool, req, POSTURE_CHECK_QUERY, () => ({ sql: '"posture_checks"', params: [] }), COLUMNS.split(', ').map((c) => `"e".${c}`).join(', '), roleFilter ? roleCondition(roleFilter) : undefined);
    return { items: r.rows.map(toCheck), totalCount: r.totalCount, limit: r.limit, offset: r.offset, filterableFields: filterableFields(POSTURE_CHECK_QUERY) };
  }

  async any(): Promise<boolean> {
    const { rows } = await this.pool.query<{ e: boolean }>('SELECT EXISTS (SELECT 1 FROM "posture_checks") AS e');
    return rows[0]?.e === true;
  }

  async mfaPromptChecks(): Promise<PostureCheck[]> {
    const { rows } = await this.pool.query<CheckRow>(
      `SELECT ${COLUMNS} FROM "posture_checks" WHERE "type_id" = 'MFA' AND (("data"->>'promptOnWake')::boolean OR ("data"->>'promptOnUnlock')::boolean)`,
    );
    return rows.map(toCheck);
  }

  private async withEvents(fn: (tx: Prisma.TransactionClient) => Promise<void>, events: PostureCheckEvent[], name: string): Promise<void> {
    try {
      await this.prisma.$transaction(async (tx) => {
        await fn(tx);
        if (events.length > 0) {
          const { text, values } = outboxInsert(events.map((e) => newChangeEvent(EVENT_SOURCE, e.type, e.data)));
          await tx.$executeRawUnsafe(text, ...values);
        }
      });
    } catch (err) {
      throw mapUnique(err, name);
    }
    if (events.length > 0) this.afterCommit();
  }

  async create(check: PostureCheck, events: PostureCheckEvent[]): Promise<void> {
    await this.withEvents(
      async (tx) => {
        await tx.postureCheck.create({
          data: {
            id: check.id,
            name: check.name,
            typeId: check.data.typeId,
            roleAttributes: check.roleAttributes,
            tags: check.tags as Prisma.InputJsonObject,
            version: check.version,
            data: dataColumn(check),
            createdAt: check.createdAt,
            updatedAt: check.updatedAt,
          },
        });
      },
      events,
      check.name,
    );
  }

  async update(check: PostureCheck, events: PostureCheckEvent[]): Promise<void> {
    await this.withEvents(
      async (tx) => {
        await tx.postureCheck.update({
          where: { id: check.id },
          data: {
            name: check.name,
            roleAttributes: check.roleAttributes,
            tags: check.tags as Prisma.InputJsonObject,
            version: check.version,
            data: dataColumn(check),
            updatedAt: check.updatedAt,
          },
        });
      },
      events,
      check.name,
    );
  }

  async delete(id: string, events: (deleted: PostureCheck) => PostureCheckEvent[]): Promise<PostureCheck | null> {
    let deleted: PostureCheck | null = null;
    await this.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRawUnsafe<CheckRow[]>(`DELETE FROM "posture_checks" WHERE "id" = $1 RETURNING ${COLUMNS}`, id);
      if (!rows[0]) return;
      deleted = toCheck(rows[0]);
      const { text, values } = outboxInsert(events(deleted).map((e) => newChangeEvent(EVENT_SOURCE, e.type, e.data)));
      await tx.$executeRawUnsafe(text, ...values);
    });
    if (deleted) this.afterCommit();
    return deleted;
  }

  async roleAttributes(req: ListRequest, extra: readonly string[] = [], withLimits = false): Promise<Page<string>> {
    const from = () => ({
      sql: `(SELECT DISTINCT a AS "id" FROM (SELECT unnest("role_attributes") AS a FROM "posture_checks" UNION SELECT unnest($1::text[])) AS u)`,
      params: [[...extra]],
    });
    // Role-attribute lists take only the filter: without `limit` in it, everything is returned (§4.1).
    const effective = withLimits ? req : { filter: req.filter, limit: req.filter && /\blimit\b/i.test(req.filter) ? undefined : '-1' };
    const r = await runList<{ id: string }>(this.pool, effective, ROLE_ATTRIBUTE_QUERY, from, '"e"."id"');
    return { items: r.rows.map((x) => x.id), totalCount: r.totalCount, limit: r.limit, offset: r.offset, filterableFields: ['id'] };
  }

  async attributeOwners(attributes: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>(attributes.map((a) => [a, []]));
    if (attributes.length === 0) return out;
    const { rows } = await this.pool.query<{ a: string; id: string }>(
      `SELECT a, "id" FROM "posture_checks", unnest("role_attributes") AS a WHERE a = ANY($1::text[]) ORDER BY "id"`,
      [attributes],
    );
    for (const r of rows) out.get(r.a)?.push(r.id);
    return out;
  }

  async listTypes(req: ListRequest): Promise<Page<PostureCheckTypeRecord>> {
    const r = await runList<{ id: string; name: string; operating_systems: unknown; created_at: Date; updated_at: Date }>(
      this.pool,
      req,
      POSTURE_CHECK_TYPE_QUERY,
      () => ({ sql: '"posture_check_types"', params: [] }),
      '"e".*',
    );
    return {
      items: r.rows.map((t) => ({ id: t.id, name: t.name, operatingSystems: t.operating_systems as PostureCheckTypeRecord['operatingSystems'], createdAt: t.created_at, updatedAt: t.updated_at })),
      totalCount: r.totalCount,
      limit: r.limit,
      offset: r.offset,
      filterableFields: filterableFields(POSTURE_CHECK_TYPE_QUERY),
    };
  }

  async findType(id: string): Promise<PostureCheckTypeRecord | null> {
    const t = await this.prisma.postureCheckType.findUnique({ where: { id } });
    return t ? { id: t.id, name: t.name, operatingSystems: t.operatingSystems as unknown as PostureCheckTypeRecord['operatingSystems'], createdAt: t.createdAt, updatedAt: t.updatedAt } : null;
  }
}
