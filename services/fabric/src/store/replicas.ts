import type { Pool } from 'pg';

/** A replica whose row was not refreshed for this long is gone. */
export const REPLICA_STALE_SECONDS = 30;

/** `fabric.replicas`: the live replicas and where another replica reaches each (relays). */
export class ReplicaStore {
  constructor(
    private readonly pool: Pool,
    private readonly id: string,
  ) {}

  /** This replica is live (refreshed every few seconds; re-created if another took it for gone). */
  async heartbeat(relayAddress: string): Promise<void> {
    await this.pool.query(
      `INSERT INTO replicas (id, relay_address) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET relay_address = $2, seen_at = now()`,
      [this.id, relayAddress],
    );
  }

  /** A clean stop: the others take over at once. */
  async leave(): Promise<void> {
    await this.pool.query('DELETE FROM replicas WHERE id = $1', [this.id]);
  }

  /** The relay address of the replica holding a router's channel (none: not connected, or its holder is gone). */
  async holderOf(routerId: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ relay_address: string }>(
      `SELECT r.relay_address FROM router_presence p JOIN replicas r ON r.id = p.replica WHERE p.router_id = $1 AND p.connected AND r.id <> $2`,
      [routerId, this.id],
    );
    return rows[0]?.relay_address || undefined;
  }

  /**
   * Takes over what gone replicas held (one replica at a time): their rows go, their routers are
   * no longer connected through them, and their circuits become this replica's. Returns the ids of
   * the circuits taken over and of the routers marked disconnected.
   */
  async takeOver(): Promise<{ circuitIds: string[]; routerIds: string[] }> {
    const c = await this.pool.connect();
    try {
      await c.query('BEGIN');
      await c.query(`SELECT pg_advisory_xact_lock(hashtext('ziti.fabric.replicas'))`);
      await c.query(`DELETE FROM replicas WHERE seen_at < now() - make_interval(secs => $1)`, [REPLICA_STALE_SECONDS]);
      const routers = await c.query<{ router_id: string }>(
        `UPDATE router_presence SET connected = false, sync_status = 'SYNC_UNKNOWN', disconnected_at = now()
         WHERE connected AND replica NOT IN (SELECT id FROM replicas) RETURNING router_id`,
      );
      const circuits = await c.query<{ id: string }>(`UPDATE circuits SET replica = $1 WHERE replica NOT IN (SELECT id FROM replicas) RETURNING id`, [this.id]);
      await c.query('COMMIT');
      return { circuitIds: circuits.rows.map((r) => r.id), routerIds: routers.rows.map((r) => r.router_id) };
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      c.release();
    }
  }
}
