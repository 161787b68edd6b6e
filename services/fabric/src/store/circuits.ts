import { type EntityQuerySchema, type QuerySymbol, compileListQuery, filterableFields } from '@ziti/http-kit';
import type { Pool } from 'pg';
import type { Circuit } from '../ctrl/circuits.js';

const col = (type: 'string' | 'datetime', column: string): QuerySymbol => ({ kind: 'scalar', type, sql: (a) => `${a}."${column}"` });

/** Public symbols of fabric `/circuits`. */
export const CIRCUIT_QUERY: EntityQuerySchema = {
  entity: 'circuits',
  table: '"circuits"',
  symbols: {
    id: col('string', 'id'),
    createdAt: col('datetime', 'created_at'),
    updatedAt: col('datetime', 'updated_at'),
    clientId: col('string', 'client_id'),
    service: col('string', 'service_id'),
    terminator: col('string', 'terminator_id'),
  },
};

interface Row {
  id: string;
  service_id: string;
  client_id: string;
  identity_id: string;
  terminator_id: string;
  instance_id: string;
  path: string[];
  links: string[];
  target: { binding?: string; address?: string; hostId?: string } | null;
  tags: Record<string, string> | null;
  ingress_id: string;
  egress_id: string;
  created_at: Date;
}

const toCircuit = (r: Row): Circuit => ({
  id: r.id,
  serviceId: r.service_id,
  clientId: r.client_id,
  identityId: r.identity_id,
  terminatorId: r.terminator_id,
  instanceId: r.instance_id,
  path: r.path,
  links: r.links ?? [],
  ingressId: r.ingress_id,
  egressId: r.egress_id,
  createdAt: r.created_at,
  creationTimespanNs: 0,
  target: { binding: r.target?.binding ?? '', address: r.target?.address ?? '', hostId: r.target?.hostId ?? '' },
  tags: r.tags ?? {},
});

/** `fabric.circuits`: the live circuits every replica lists (each writes its own). */
export class CircuitStore {
  constructor(
    private readonly pool: Pool,
    private readonly replica: string,
  ) {}

  async add(c: Circuit): Promise<void> {
    await this.pool.query(
      `INSERT INTO circuits (id, service_id, client_id, identity_id, terminator_id, instance_id, path, links, ingress_id, egress_id, replica, created_at, updated_at, target, tags)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $12, $8, $9, $10, $11, $11, $13, $14)
       ON CONFLICT (id) DO UPDATE SET path = EXCLUDED.path, links = EXCLUDED.links, updated_at = now()`,
      [c.id, c.serviceId, c.clientId, c.identityId, c.terminatorId, c.instanceId, c.path, c.ingressId, c.egressId, this.replica, c.createdAt, c.links, JSON.stringify(c.target), JSON.stringify(c.tags)],
    );
  }

  async existing(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const { rows } = await this.pool.query<{ id: string }>('SELECT id FROM circuits WHERE id = ANY($1::text[])', [ids]);
    return new Set(rows.map((r) => r.id));
  }

  async byIds(ids: readonly string[]): Promise<Circuit[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.pool.query<Row>('SELECT * FROM circuits WHERE id = ANY($1::text[])', [ids]);
    return rows.map(toCircuit);
  }

  async remove(id: string): Promise<void> {
    await this.pool.query('DELETE FROM circuits WHERE id = $1', [id]);
  }

  async list(req: { limit?: string; offset?: string; filter?: string; sort?: string }) {
    const q = compileListQuery(req, CIRCUIT_QUERY, { alias: 'e' });
    const body = `FROM "circuits" AS "e" WHERE ${q.where}`;
    const paging = `${q.limit !== null ? `LIMIT ${q.limit}` : ''} ${q.offset > 0 ? `OFFSET ${q.offset}` : ''}`;
    const [rows, count] = await Promise.all([
      this.pool.query<Row>(`SELECT "e".* ${body} ORDER BY ${q.orderBy} ${paging}`, q.params),
      this.pool.query<{ n: string }>(`SELECT count(*) AS n ${body}`, q.params),
    ]);
    return { items: rows.rows.map(toCircuit), pagination: { limit: q.pagination.limit, offset: q.pagination.offset, totalCount: Number(count.rows[0]?.n ?? 0) }, filterableFields: filterableFields(CIRCUIT_QUERY) };
  }
}
