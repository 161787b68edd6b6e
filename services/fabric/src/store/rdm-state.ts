import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';

/** The data model's durable position: the timeline and the index of the last change set. */
export interface RdmPosition {
  timelineId: string;
  index: number;
}

/** `fabric.rdm_state`: one row, created with a random timeline on first use. */
export class RdmStateStore {
  constructor(private readonly pool: Pool) {}

  async load(): Promise<RdmPosition> {
    await this.pool.query('INSERT INTO rdm_state (id, timeline_id, index) VALUES (1, $1, 0) ON CONFLICT (id) DO NOTHING', [randomUUID()]);
    const { rows } = await this.pool.query<{ timeline_id: string; index: string }>('SELECT timeline_id, index FROM rdm_state WHERE id = 1');
    return { timelineId: rows[0].timeline_id, index: Number(rows[0].index) };
  }

  /** Takes the next index (committed before the change set is sent, so an index is never reused). */
  async next(): Promise<RdmPosition> {
    const { rows } = await this.pool.query<{ timeline_id: string; index: string }>('UPDATE rdm_state SET index = index + 1 WHERE id = 1 RETURNING timeline_id, index');
    return { timelineId: rows[0].timeline_id, index: Number(rows[0].index) };
  }

  /** Takes the next index on a new timeline (routers on the old one are sent the full state). */
  async newTimeline(): Promise<RdmPosition> {
    const { rows } = await this.pool.query<{ timeline_id: string; index: string }>(
      'UPDATE rdm_state SET index = index + 1, timeline_id = $1 WHERE id = 1 RETURNING timeline_id, index',
      [randomUUID()],
    );
    return { timelineId: rows[0].timeline_id, index: Number(rows[0].index) };
  }
}
