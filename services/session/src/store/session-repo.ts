import { batched, prepared } from '@ziti/db-kit';
import { type EntityQuerySchema, type QuerySymbol, compileListQuery, filterableFields } from '@ziti/http-kit';
import type { Pool } from 'pg';
import type { ListRequest, Page, Session, SessionEdgeRouter, SessionFacts, SessionKey, SessionType } from '../domain/model.js';
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
const KEY_COLUMNS = ['id', 'api_session_id', 'service_id', 'type'];

// The hot path's statements (session create and its dedup lookup), prepared per connection.
const FIND_EXISTING = `SELECT ${SELECT} FROM "sessions" WHERE "api_session_id" = $1 AND "service_id" = $2 AND "type" = $3`;
const FIND_BY_ID = `SELECT ${SELECT} FROM "sessions" WHERE "id" = $1`;
/** The facts of several sessions routers present (SessionService.GetSessions), in id order. */
const FIND_BY_IDS = `SELECT "id", "api_session_id", "identity_id", "service_id", "type" FROM "sessions" WHERE "id" = ANY($1::text[]) ORDER BY "id"`;
/**
 * Inserts a batch of new sessions (a jsonb array of rows, in key order so that concurrent batches
 * take their index locks in the same order) and answers, for every key, the row now stored: for a
 * new row only its id and key (`inserted`: the caller has the rest), for an existing one (a
 * repeat) the whole row. Keys repeated within the batch get the one row.
 */
const INSERT_MANY = `WITH x AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS x("id" text, "token" text, "api_session_id" text, "identity_id" text, "service_id" text,
      "service_name" text, "type" text, "tags" jsonb, "edge_routers" jsonb, "service_policy_ids" text[], "posture_check_ids" text[],
      "created_at" timestamptz, "updated_at" timestamptz)),
  ins AS (
    INSERT INTO "sessions" (${SELECT}) SELECT ${SELECT} FROM x ORDER BY "api_session_id", "service_id", "type"
    ON CONFLICT ("api_session_id", "service_id", "type") DO NOTHING RETURNING "id", "api_session_id", "service_id", "type")
  SELECT TRUE AS "inserted", ${COLUMNS.map((c) => (KEY_COLUMNS.includes(c) ? `ins."${c}"` : `NULL AS "${c}"`)).join(', ')} FROM ins
  UNION ALL
  SELECT FALSE, ${COLUMNS.map((c) => `s."${c}"`).join(', ')} FROM "sessions" s
  JOIN x ON s."api_session_id" = x."api_session_id" AND s."service_id" = x."service_id" AND s."type" = x."type"
  WHERE NOT EXISTS (SELECT 1 FROM ins WHERE ins."api_session_id" = x."api_session_id" AND ins."service_id" = x."service_id" AND ins."type" = x."type")`;

const sessionKey = (s: { apiSessionId: string; serviceId: string; type: string }) => `${s.apiSessionId}\n${s.serviceId}\n${s.type}`;

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

  /** Session creates arriving together are inserted by one statement (see `batched`). */
  private readonly insertBatch = batched((sessions: Session[]) => this.insertMany(sessions));

  /** The sessions of these ids that exist (unknown ids left out), in id order. */
  async factsByIds(ids: readonly string[]): Promise<SessionFacts[]> {
    const { rows } = await this.pool.query<{ id: string; api_session_id: string; identity_id: string; service_id: string; type: string }>(FIND_BY_IDS, [ids]);
    return rows.map((r) => ({ id: r.id, apiSessionId: r.api_session_id, identityId: r.identity_id, serviceId: r.service_id, type: r.type as SessionType }));
  }

  async insertOrGet(s: Session): Promise<Session> {
    const stored = await this.insertBatch(s);
    // Lost a race with a concurrent identical create whose row is not visible yet: read it again.
    if (!stored) return (await this.findExisting(s.apiSessionId, s.serviceId, s.type)) ?? s;
    return stored;
  }

  /** Per input, in order: the session stored under its key after the insert (null: not visible yet). */
  async insertMany(sessions: readonly Session[]): Promise<(Session | null)[]> {
    const rows = sessions.map((s) => ({
      id: s.id,
      token: s.token,
      api_session_id: s.apiSessionId,
      identity_id: s.identityId,
      service_id: s.serviceId,
      service_name: s.serviceName,
      type: s.type,
      tags: s.tags,
      edge_routers: s.edgeRouters,
      service_policy_ids: s.servicePolicyIds,
      posture_check_ids: s.postureCheckIds,
      created_at: s.createdAt.toISOString(),
      updated_at: s.updatedAt.toISOString(),
    }));
    const { rows: stored } = await this.pool.query<Row & { inserted: boolean }>(prepared(INSERT_MANY, [JSON.stringify(rows)]));
    const byKey = new Map(stored.map((r) => [sessionKey({ apiSessionId: r.api_session_id, serviceId: r.service_id, type: r.type }), r]));
    const byId = new Map(sessions.map((s) => [s.id, s]));
    return sessions.map((s) => {
      const r = byKey.get(sessionKey(s));
      if (!r) return null;
      // A new row is the input it was made from (of this create, or of an identical one in the batch).
      return r.inserted ? (byId.get(r.id) ?? null) : toSession(r);
    });
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

  private async deleteWhere(where: string, params: unknown[]): Promise<SessionKey[]> {
    const r = await this.pool.query<SessionKey>(
      `DELETE FROM "sessions" WHERE ${where}
       RETURNING "id", "api_session_id" AS "apiSessionId", "identity_id" AS "identityId", "service_id" AS "serviceId", "type"`,
      params,
    );
    return r.rows;
  }

  deleteById(id: string): Promise<SessionKey[]> {
    return this.deleteWhere('"id" = $1', [id]);
  }

  deleteByApiSession(apiSessionId: string): Promise<SessionKey[]> {
    return this.deleteWhere('"api_session_id" = $1', [apiSessionId]);
  }

  deleteByIdentity(identityId: string): Promise<SessionKey[]> {
    return this.deleteWhere('"identity_id" = $1', [identityId]);
  }

  deleteByService(serviceId: string): Promise<SessionKey[]> {
    return this.deleteWhere('"service_id" = $1', [serviceId]);
  }

  deleteByIdentityAndService(identityId: string, serviceId: string, type?: SessionType): Promise<SessionKey[]> {
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
