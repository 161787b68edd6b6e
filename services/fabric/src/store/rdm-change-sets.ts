import type { Pool } from 'pg';
import type { ModelChange } from '../rdm/model.js';

/** A change set as the leading replica stored it. */
export interface StoredChangeSet {
  index: number;
  previousIndex: number;
  timelineId: string;
  changes: ModelChange[];
}

/** `fabric.rdm_change_sets`: the router data model's change sets in index order (shared by the replicas). */
export class RdmChangeSetStore {
  constructor(private readonly pool: Pool) {}

  async add(set: StoredChangeSet): Promise<void> {
    await this.pool.query('INSERT INTO rdm_change_sets (index, previous_index, timeline_id, changes) VALUES ($1, $2, $3, $4)', [
      set.index,
      set.previousIndex,
      set.timelineId,
      JSON.stringify(set.changes),
    ]);
  }

  /** The change sets after `index`, in order (at most `limit`). */
  async after(index: number, limit = 1000): Promise<StoredChangeSet[]> {
    const { rows } = await this.pool.query<{ index: string; previous_index: string; timeline_id: string; changes: ModelChange[] }>(
      'SELECT index, previous_index, timeline_id, changes FROM rdm_change_sets WHERE index > $1 ORDER BY index LIMIT $2',
      [index, limit],
    );
    return rows.map((r) => ({ index: Number(r.index), previousIndex: Number(r.previous_index), timelineId: r.timeline_id, changes: r.changes.map(revive) }));
  }

  /** The last `limit` change sets up to `index`, in order (what a replica replays after its start). */
  async upTo(index: number, limit: number): Promise<StoredChangeSet[]> {
    const { rows } = await this.pool.query<{ index: string; previous_index: string; timeline_id: string; changes: ModelChange[] }>(
      'SELECT index, previous_index, timeline_id, changes FROM rdm_change_sets WHERE index <= $1 ORDER BY index DESC LIMIT $2',
      [index, limit],
    );
    return rows.reverse().map((r) => ({ index: Number(r.index), previousIndex: Number(r.previous_index), timelineId: r.timeline_id, changes: r.changes.map(revive) }));
  }

  /** Keeps the last `keep` change sets. */
  async trim(keep: number): Promise<void> {
    await this.pool.query('DELETE FROM rdm_change_sets WHERE index < (SELECT max(index) FROM rdm_change_sets) - $1', [keep]);
  }
}

/** JSON gives buffers back as `{type: 'Buffer', data}` (public keys carry DER): made Buffers again. */
function revive(c: ModelChange): ModelChange {
  const v = c.entity.value as Record<string, unknown> | undefined;
  if (c.entity.kind === 'publicKey' && v && typeof v.data === 'object' && v.data && (v.data as { type?: unknown }).type === 'Buffer') {
    return { ...c, entity: { ...c.entity, value: { ...v, data: Buffer.from((v.data as { data: number[] }).data) } } };
  }
  return c;
}
