import type { Pool } from 'pg';
import type { Identity } from '../domain/model.js';
import type { IntegrityRepository, CaReference } from '../domain/integrity-manager.js';
import type { Db } from './db.js';
import { toIdentity } from './identity-repo.js';

/** SQL of identity-auth's part of the data integrity check (ids compared byte-wise, `COLLATE "C"`). */
export class SqlIntegrityRepository implements IntegrityRepository {
  constructor(
    private readonly db: Db,
    private readonly pool: Pool,
  ) {}

  async identityPage(after: string, limit: number): Promise<Identity[]> {
    const { rows } = await this.pool.query<{ id: string }>(
      `SELECT "id" FROM "identities" WHERE "id" COLLATE "C" > $1 ORDER BY "id" COLLATE "C" LIMIT $2`,
      [after, limit],
    );
    const ids = rows.map((r) => r.id);
    const found = new Map((await this.db.identity.findMany({ where: { id: { in: ids } } })).map((r) => [r.id, toIdentity(r)]));
    return ids.map((id) => found.get(id)).filter((i): i is Identity => i !== undefined);
  }

  async existingIds(kind: 'identity' | 'api-session', ids: readonly string[]): Promise<string[]> {
    const table = kind === 'identity' ? 'identities' : 'api_sessions';
    const { rows } = await this.pool.query<{ id: string }>(`SELECT "id" FROM "${table}" WHERE "id" = ANY($1::text[])`, [ids]);
    return rows.map((r) => r.id);
  }

  async caReferences(after: string, limit: number, graceSeconds: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>(
      `SELECT DISTINCT "ca_id" COLLATE "C" AS id FROM "authenticators"
        WHERE "ca_id" IS NOT NULL AND "ca_id" COLLATE "C" > $1 AND "created_at" < now() - make_interval(secs => $3)
        ORDER BY 1 LIMIT $2`,
      [after, limit, graceSeconds],
    );
    return rows.map((r) => r.id);
  }

  async authenticatorsOfCas(caIds: readonly string[], limit: number): Promise<CaReference[]> {
    const { rows } = await this.pool.query(
      `SELECT "id", "identity_id", "ca_id" FROM "authenticators" WHERE "ca_id" = ANY($1::text[]) ORDER BY "id" LIMIT $2`,
      [caIds, limit],
    );
    return rows.map((r) => ({ authenticatorId: r.id, identityId: r.identity_id, caId: r.ca_id }));
  }

  async deleteAuthenticators(ids: readonly string[]): Promise<Set<string>> {
    const { rows } = await this.pool.query<{ id: string }>(`DELETE FROM "authenticators" WHERE "id" = ANY($1::text[]) RETURNING "id"`, [ids]);
    return new Set(rows.map((r) => r.id));
  }
}
