import { prepared } from '@ziti/db-kit';
import { type EntityQuerySchema, type QuerySymbol, compileListQuery, filterableFields } from '@ziti/http-kit';
import type { Pool } from 'pg';
import type { ListRequest, Page, Session, SessionEdgeRouter, SessionType } from '../domain/model.js';
import type { ServiceUpdateStore, SessionStore } from '../domain/ports.js';

const col = (type: 'string' | 'datetime', column: string): QuerySymbol => ({ kind: 'scalar', type, sql: (a) => `${a}."${column}"` });

/** Public symbols of `/sessions` (§4.2). */
export const SESSION_QUERY: EntityQuerySchema = {
  entity: 'sessions',
  table: '"sessions"',
  symbols: {
    id: col('string', 'id'),
    createdAt: col('datetime', 'created_at'),
    updatedAt: col('datetime', 'updated_at'),
    tags: { kind: 'map', sql: (a) => `${a}."tags"` },
    isSystem: { kind: 'scalar', type: 'bool', sql: () => 'FALSE' },
    token: col('string', 'token'),
    type: col('string', 'type'),
    apiSession: col('string', 'api_session_id'),
    service: col('string', 'service_id'),
    identity: col('string', 'identity_id'),
    servicePolicies: { kind: 'set', type: 'string', elements: (a) => `SELECT unnest(${a}."service_policy_ids") AS v` },
  },
};

interface Row {
  id: string;
  token: string;
  api_session_id: string;
  identity_id: string;
  service_id: string;
  service_name: string;
  type: string;
  tags: unknown;
  edge_routers: unknown;
  service_policy_ids: string[];
  posture_check_ids: string[];
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = ['id', 'token', 'api_session_id', 'identity_id', 'service_id', 'service_name', 'type', 'tags', 'edge_routers', 'service_policy_ids', 'posture_check_ids', 'created_at', 'updated_at'];
const SELECT = COLUMNS.map((c) => `"${c}"`).join(', ');

// The hot path's statements (session create and its dedup lookup), prepared per connection.
const FIND_EXISTING = `SELECT ${SELECT} FROM "sessions" WHERE "api_session_id" = $1 AND "service_id" = $2 AND "type" = $3`;
const FIND_BY_ID = `SELECT ${SELECT} FROM "sessions" WHERE "id" = $1`;
const INSERT_OR_GET = `WITH ins AS (
    INSERT INTO "sessions" (${SELECT}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10::text[], $11::text[], $12, $13)
    ON CONFLICT ("api_session_id", "service_id", "type") DO NOTHING RETURNING ${SELECT})
  SELECT ${SELECT} FROM ins
  UNION ALL
  SELECT ${SELECT} FROM "sessions" WHERE "api_session_id" = $3 AND "service_id" = $5 AND "type" = $7 AND NOT EXISTS (SELECT 1 FROM ins)`;

const object = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

function toSession(r: Row): Session {
  return {
    id: r.id,
    token: r.token,
    apiSessionId: r.api_session_id,
    identityId: r.identity_id,
    serviceId: r.service_id,
    serviceName: r.service_name,
    type: r.type as SessionType,
    tags: object(r.tags),
    edgeRouters: Array.isArray(r.edge_routers) ? (r.edge_routers as SessionEdgeRouter[]) : [],
    servicePolicyIds: r.service_policy_ids ?? [],
    postureCheckIds: r.posture_check_ids ?? [],
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Sessions in Postgres (raw SQL on the hot path: dedup lookup and insert are one statement each). */
export class SessionRepository implements SessionStore {
  constructor(private readonly pool: Pool) {}

  async findExisting(apiSessionId: string, serviceId: string, type: SessionType): Promise<Session | null> {
    const { rows } = await this.pool.query<Row>(prepared(FIND_EXISTING, [apiSessionId, serviceId, type]));
    return rows[0] ? toSession(rows[0]) : null;
  }

  async findById(id: string): Promise<Session | null> {
    const { rows } = await this.pool.query<Row>(prepared(FIND_BY_ID, [id]));
    return rows[0] ? toSession(rows[0]) : null;
  }

  async insertOrGet(s: Session): Promise<Session> {
    const { rows } = await this.pool.query<Row>(
      prepared(INSERT_OR_GET, [
        s.id, s.token, s.apiSessionId, s.identityId, s.serviceId, s.serviceName, s.type,
        JSON.stringify(s.tags), JSON.stringify(s.edgeRouters), s.servicePolicyIds, s.postureCheckIds, s.createdAt, s.updatedAt,
      ]),
    );
    // Lost a race with a concurrent identical create whose row is not visible yet: read it again.
    if (!rows[0]) return (await this.findExisting(s.apiSessionId, s.serviceId, s.type)) ?? s;
    return toSession(rows[0]);
  }

  async list(req: ListRequest, identityId?: string): Promise<Page<Session>> {
    const q = compileListQuery(req, SESSION_QUERY, { alias: 'e' });
    const params = [...q.params];
    let where = q.where;
    if (identityId !== undefined) {
      params.push(identityId);
      where = `(${where}) AND "e"."identity_id" = $${params.length}`;
    }
    const body = `FROM "sessions" AS "e" WHERE ${where}`;
    const paging = `${q.limit !== null ? `LIMIT ${q.limit}` : ''} ${q.offset > 0 ? `OFFSET ${q.offset}` : ''}`;
    const [rows, count] = await Promise.all([
      this.pool.query<Row>(`SELECT ${COLUMNS.map((c) => `"e"."${c}"`).join(', ')} ${body} ORDER BY ${q.orderBy} ${paging}`, params),
      this.pool.query<{ n: string }>(`SELECT count(*) AS n ${body}`, params),
    ]);
    return {
      items: rows.rows.map(toSession),
      totalCount: Number(count.rows[0]?.n ?? 0),
      limit: q.pagination.limit,
      offset: q.pagination.offset,
      filterableFields: filterableFields(SESSION_QUERY),
    };
  }

  private async deleteWhere(where: string, params: unknown[]): Promise<number> {
    const r = await this.pool.query(`DELETE FROM "sessions" WHERE ${where}`, params);
    return r.rowCount ?? 0;
  }

  async deleteById(id: string): Promise<boolean> {
    return (await this.deleteWhere('"id" = $1', [id])) > 0;
  }

  deleteByApiSession(apiSessionId: string): Promise<number> {
    return this.deleteWhere('"api_session_id" = $1', [apiSessionId]);
  }

  deleteByIdentity(identityId: string): Promise<number> {
    return this.deleteWhere('"identity_id" = $1', [identityId]);
  }

  deleteByService(serviceId: string): Promise<number> {
    return this.deleteWhere('"service_id" = $1', [serviceId]);
  }

  deleteByIdentityAndService(identityId: string, serviceId: string, type?: SessionType): Promise<number> {
    return type
      ? this.deleteWhere('"identity_id" = $1 AND "service_id" = $2 AND "type" = $3', [identityId, serviceId, type])
      : this.deleteWhere('"identity_id" = $1 AND "service_id" = $2', [identityId, serviceId]);
  }

  async identitiesWithPostureSessions(): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>('SELECT DISTINCT "identity_id" AS id FROM "sessions" WHERE cardinality("posture_check_ids") > 0');
    return rows.map((r) => r.id);
  }

  async exclusively(name: string, fn: () => Promise<void>): Promise<boolean> {
    const client = await this.pool.connect();
    try {
      const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [`session:${name}`]);
      if (!rows[0]?.ok) return false;
      try {
        await fn();
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', [`session:${name}`]);
      }
      return true;
    } finally {
      client.release();
    }
  }

  async ofIdentities(identityIds: readonly string[], onlyWithPosture = false): Promise<Session[]> {
    if (identityIds.length === 0) return [];
    const posture = onlyWithPosture ? ' AND cardinality("posture_check_ids") > 0' : '';
    const { rows } = await this.pool.query<Row>(
      `SELECT ${SELECT} FROM "sessions" WHERE "identity_id" = ANY($1::text[])${posture} ORDER BY "identity_id", "service_id"`,
      [identityIds],
    );
    return rows.map(toSession);
  }
}

/** Service-list change times in Postgres (primary-key reads). */
export class ServiceUpdateRepository implements ServiceUpdateStore {
  constructor(private readonly pool: Pool) {}

  async get(identityId: string, now: Date): Promise<Date> {
    const { rows } = await this.pool.query<{ at: Date }>(
      `WITH ins AS (
         INSERT INTO "identity_service_updates" ("identity_id", "last_change_at") VALUES ($1, $2)
         ON CONFLICT ("identity_id") DO NOTHING RETURNING "last_change_at" AS at)
       SELECT at FROM ins UNION ALL SELECT "last_change_at" AS at FROM "identity_service_updates" WHERE "identity_id" = $1 LIMIT 1`,
      [identityId, now],
    );
    return rows[0]?.at ?? now;
  }

  async bump(identityIds: readonly string[], at: Date): Promise<void> {
    await this.pool.query(
      `INSERT INTO "identity_service_updates" ("identity_id", "last_change_at") SELECT unnest($1::text[]), $2
       ON CONFLICT ("identity_id") DO UPDATE SET "last_change_at" = GREATEST("identity_service_updates"."last_change_at", EXCLUDED."last_change_at")`,
      [identityIds, at],
    );
  }

  async forget(identityId: string): Promise<void> {
    await this.pool.query('DELETE FROM "identity_service_updates" WHERE "identity_id" = $1', [identityId]);
  }
}
