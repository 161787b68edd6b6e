import { PG_FOREIGN_KEY_VIOLATION, pgErrorCode } from '@ziti/db-kit';
import { ApiError } from '@ziti/errors';
import type { ListRequest, Page, Terminator } from '../domain/model.js';
import type { ListScope, NewTerminator, TerminatorRepository } from '../domain/ports.js';
import { obj, type Sql } from './db.js';
import { inIdOrder, listIds } from './list.js';
import { TERMINATOR_QUERY } from './query-schemas.js';
import { scopeCondition } from './scopes.js';

const TERMINATOR_SELECT = `SELECT t."id", t."service_id", t."router_id", t."binding", t."address", t."identity", t."cost", t."precedence",
  t."tags", t."host_id", t."peer_data", t."is_system", t."saved_precedence", t."created_at", t."updated_at",
  s."name" AS service_name, r."name" AS router_name FROM "terminators" t
  JOIN "services" s ON s."id" = t."service_id" JOIN "routers" r ON r."id" = t."router_id"`;

const strings = (v: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries(obj(v)).filter((e): e is [string, string] => typeof e[1] === 'string'));

const toTerminator = (r: any): Terminator => ({
  id: r.id,
  serviceId: r.service_id,
  serviceName: r.service_name,
  routerId: r.router_id,
  routerName: r.router_name,
  binding: r.binding,
  address: r.address,
  identity: r.identity,
  cost: r.cost,
  precedence: r.precedence,
  hostId: r.host_id,
  peerData: strings(r.peer_data),
  isSystem: r.is_system,
  savedPrecedence: r.saved_precedence ?? null,
  tags: obj(r.tags),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const INSERT = `INSERT INTO "terminators" ("id", "service_id", "router_id", "binding", "address", "identity", "cost", "precedence", "tags",
    "host_id", "instance_secret", "peer_data", "is_system", "saved_precedence")
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`;

const params = (t: NewTerminator) => [
  t.id, t.serviceId, t.routerId, t.binding, t.address, t.identity, t.cost, t.precedence, JSON.stringify(t.tags),
  t.hostId, t.instanceSecret ?? null, JSON.stringify(t.peerData), t.isSystem, t.savedPrecedence,
];

/** Terminators: the management API's CRUD and the router control plane's binds (single statements, no evaluation lock). */
export class SqlTerminatorRepository implements TerminatorRepository {
  constructor(private readonly sql: Sql) {}

  async findMany(ids: readonly string[]): Promise<Terminator[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.sql.query(`${TERMINATOR_SELECT} WHERE t."id" = ANY($1::text[])`, [ids]);
    return rows.map(toTerminator);
  }

  async find(id: string): Promise<Terminator | null> {
    return (await this.findMany([id]))[0] ?? null;
  }

  async list(req: ListRequest, scope?: ListScope): Promise<Page<Terminator>> {
    const page = await listIds(this.sql, TERMINATOR_QUERY, req, scopeCondition(scope));
    return { ...page, items: inIdOrder(page.ids, await this.findMany(page.ids)) };
  }

  async save(t: NewTerminator, isNew: boolean): Promise<void> {
    if (isNew) {
      await this.sql.query(INSERT, params(t));
      return;
    }
    await this.sql.query(
      `UPDATE "terminators" SET "service_id" = $2, "router_id" = $3, "binding" = $4, "address" = $5, "identity" = $6, "cost" = $7,
         "precedence" = $8, "tags" = $9, "host_id" = $10, "instance_secret" = coalesce($11, "instance_secret"), "peer_data" = $12,
         "is_system" = $13, "saved_precedence" = $14, "updated_at" = now() WHERE "id" = $1`,
      params(t),
    );
  }

  async delete(id: string): Promise<void> {
    await this.sql.query(`DELETE FROM "terminators" WHERE "id" = $1`, [id]);
  }

  async insertIfAbsent(t: NewTerminator): Promise<boolean> {
    try {
      const { rowCount } = await this.sql.query(`${INSERT} ON CONFLICT ("id") DO NOTHING`, params(t));
      return rowCount === 1;
    } catch (err) {
      // The service or router went between the caller's check and the insert.
      if (pgErrorCode(err) === PG_FOREIGN_KEY_VIOLATION) throw ApiError.notFound(`no service ${t.serviceId} or router ${t.routerId}`);
      throw err;
    }
  }

  async updateOnRouter(id: string, routerId: string, change: { cost?: number; precedence?: string }): Promise<Terminator | null> {
    const { rowCount } = await this.sql.query(
      `UPDATE "terminators" SET "cost" = coalesce($3, "cost"), "precedence" = coalesce($4, "precedence"), "updated_at" = now()
        WHERE "id" = $1 AND "router_id" = $2`,
      [id, routerId, change.cost ?? null, change.precedence ?? null],
    );
    return rowCount === 1 ? this.find(id) : null;
  }

  async removeOnRouter(routerId: string, ids: readonly string[], allEdge: boolean): Promise<string[]> {
    const { rows } = await this.sql.query<{ id: string }>(
      `DELETE FROM "terminators" WHERE "router_id" = $1 AND ("id" = ANY($2::text[]) OR ($3 AND "binding" = 'edge')) RETURNING "id"`,
      [routerId, ids, allEdge],
    );
    return rows.map((r) => r.id);
  }

  async ofService(serviceId: string): Promise<Terminator[]> {
    const { rows } = await this.sql.query(`${TERMINATOR_SELECT} WHERE t."service_id" = $1 ORDER BY t."created_at", t."id"`, [serviceId]);
    return rows.map(toTerminator);
  }
}
