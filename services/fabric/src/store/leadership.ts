import type { Pool, PoolClient } from 'pg';

/**
 * One leader among the replicas: whoever holds a PostgreSQL session advisory lock. The lock is
 * tried every `everyMs`; it is held on a connection of its own and lost with it (a replica that
 * dies, or loses its database connection, lets another take over).
 */
export class Leadership {
  private client: PoolClient | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly pool: Pool,
    private readonly key: string,
    private readonly on: { lead(): void; lose(): void },
    private readonly problem: (m: string, err?: unknown) => void,
    private readonly everyMs = 2000,
  ) {}

  get leading(): boolean {
    return this.client !== undefined;
  }

  start(): void {
    const attempt = () => {
      if (this.stopped) return;
      void this.tryLead().finally(() => {
        if (!this.stopped) this.timer = setTimeout(attempt, this.everyMs);
        this.timer?.unref();
      });
    };
    attempt();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const c = this.client;
    this.client = undefined;
    if (c) {
      await c.query('SELECT pg_advisory_unlock(hashtext($1))', [this.key]).catch(() => undefined);
      c.release();
    }
  }

  private async tryLead(): Promise<void> {
    if (this.client) {
      // Still ours while the connection answers.
      try {
        await this.client.query('SELECT 1');
        return;
      } catch {
        this.lost();
      }
    }
    let c: PoolClient | undefined;
    try {
      c = await this.pool.connect();
      const { rows } = await c.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [this.key]);
      if (!rows[0]?.ok) return void c.release();
      c.on('error', () => this.lost());
      this.client = c;
      c = undefined;
      this.on.lead();
    } catch (err) {
      c?.release(true);
      this.problem('fabric: leadership not tried', err);
    }
  }

  private lost(): void {
    const c = this.client;
    if (!c) return;
    this.client = undefined;
    c.release(true);
    this.on.lose();
  }
}
