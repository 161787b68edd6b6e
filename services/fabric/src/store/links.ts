import { type EntityQuerySchema, type QuerySymbol, compileListQuery, filterableFields } from '@ziti/http-kit';
import type { Pool } from 'pg';

/** OpenZiti's `initialLinkLatency`: a new link's latency both ways until routers measure it. */
export const INITIAL_LATENCY_NS = 65_000_000_000;

/** OpenZiti's link modes (`controller/model/link_model.go`). */
export type LinkState = 'Pending' | 'Connected' | 'Failed' | 'Duplicate';

export interface Link {
  id: string;
  srcRouterId: string;
  dstRouterId: string;
  protocol: string;
  dialAddress: string;
  iteration: number;
  state: LinkState;
  staticCost: number;
  /** Nanoseconds. */
  srcLatency: number;
  dstLatency: number;
  down: boolean;
  /** The replica whose router (the source) reported it. */
  replica: string;
  createdAt: Date;
}

/** OpenZiti's link cost: the static cost plus both latencies in whole milliseconds. */
export const linkCost = (l: Pick<Link, 'staticCost' | 'srcLatency' | 'dstLatency'>): number => l.staticCost + Math.floor(l.srcLatency / 1e6) + Math.floor(l.dstLatency / 1e6);

/** Whether paths may cross the link (connected and not marked down). */
export const linkUsable = (l: Pick<Link, 'state' | 'down'>): boolean => l.state === 'Connected' && !l.down;

const col = (type: 'string' | 'int' | 'bool' | 'datetime', column: string): QuerySymbol => ({ kind: 'scalar', type, sql: (a) => `${a}."${column}"` });

/** Public symbols of fabric `/links`. */
export const LINK_QUERY: EntityQuerySchema = {
  entity: 'links',
  table: '"links"',
  symbols: {
    id: col('string', 'id'),
    createdAt: col('datetime', 'created_at'),
    updatedAt: col('datetime', 'updated_at'),
    sourceRouter: col('string', 'src_router_id'),
    destRouter: col('string', 'dst_router_id'),
    protocol: col('string', 'protocol'),
    state: col('string', 'state'),
    staticCost: col('int', 'static_cost'),
    cost: { kind: 'scalar', type: 'int', sql: (a) => `(${a}."static_cost" + ${a}."src_latency" / 1000000 + ${a}."dst_latency" / 1000000)` },
    down: col('bool', 'down'),
  },
};

interface Row {
  id: string;
  src_router_id: string;
  dst_router_id: string;
  protocol: string;
  dial_address: string;
  iteration: string;
  state: string;
  static_cost: number;
  src_latency: string;
  dst_latency: string;
  down: boolean;
  replica: string;
  created_at: Date;
}

const toLink = (r: Row): Link => ({
  id: r.id,
  srcRouterId: r.src_router_id,
  dstRouterId: r.dst_router_id,
  protocol: r.protocol,
  dialAddress: r.dial_address,
  iteration: Number(r.iteration),
  state: r.state as LinkState,
  staticCost: r.static_cost,
  srcLatency: Number(r.src_latency),
  dstLatency: Number(r.dst_latency),
  down: r.down,
  replica: r.replica,
  createdAt: r.created_at,
});

/** `fabric.links`: the links every replica reads (each writes those its routers report). */
export class LinkStore {
  constructor(private readonly pool: Pool) {}

  async put(l: Link): Promise<void> {
    await this.pool.query(
      `INSERT INTO links (id, src_router_id, dst_router_id, protocol, dial_address, iteration, state, static_cost, src_latency, dst_latency, down, replica, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, now())
       ON CONFLICT (id) DO UPDATE SET src_router_id = $2, dst_router_id = $3, protocol = $4, dial_address = $5, iteration = $6, state = $7,
         static_cost = $8, src_latency = $9, dst_latency = $10, down = $11, replica = $12, updated_at = now()`,
      [l.id, l.srcRouterId, l.dstRouterId, l.protocol, l.dialAddress, l.iteration, l.state, l.staticCost, Math.round(l.srcLatency), Math.round(l.dstLatency), l.down, l.replica, l.createdAt],
    );
  }

  /** One end's measured latency (ns): only that column, so the replicas of the two ends never overwrite each other's. */
  async latency(id: string, end: 'src' | 'dst', ns: number): Promise<void> {
    await this.pool.query(`UPDATE links SET ${end === 'src' ? 'src_latency' : 'dst_latency'} = $2, updated_at = now() WHERE id = $1`, [id, Math.round(ns)]);
  }

  async remove(ids: readonly string[]): Promise<void> {
    if (ids.length > 0) await this.pool.query('DELETE FROM links WHERE id = ANY($1::text[])', [ids]);
  }

  async all(): Promise<Link[]> {
    return (await this.pool.query<Row>('SELECT * FROM links')).rows.map(toLink);
  }

  async find(id: string): Promise<Link | undefined> {
    const { rows } = await this.pool.query<Row>('SELECT * FROM links WHERE id = $1', [id]);
    return rows[0] ? toLink(rows[0]) : undefined;
  }

  async list(req: { limit?: string; offset?: string; filter?: string; sort?: string }) {
    const q = compileListQuery(req, LINK_QUERY, { alias: 'e' });
    const body = `FROM "links" AS "e" WHERE ${q.where}`;
    const paging = `${q.limit !== null ? `LIMIT ${q.limit}` : ''} ${q.offset > 0 ? `OFFSET ${q.offset}` : ''}`;
    const [rows, count] = await Promise.all([
      this.pool.query<Row>(`SELECT "e".* ${body} ORDER BY ${q.orderBy} ${paging}`, q.params),
      this.pool.query<{ n: string }>(`SELECT count(*) AS n ${body}`, q.params),
    ]);
    return { items: rows.rows.map(toLink), pagination: { limit: q.pagination.limit, offset: q.pagination.offset, totalCount: Number(count.rows[0]?.n ?? 0) }, filterableFields: filterableFields(LINK_QUERY) };
  }
}
