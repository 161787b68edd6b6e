import type { Pool } from 'pg';
import { MAX_TOKEN_SECONDS } from './claims.js';
import type { RevocableToken, RevocationPort, RevocationType } from './ports.js';

const UPSERT = `INSERT INTO "revocations" ("id", "type", "expires_at", "issued_before", "tags", "created_at", "updated_at")
  VALUES ($1, $2, $3, $4, $5::jsonb, now(), now())
  ON CONFLICT ("id") DO UPDATE SET "type" = EXCLUDED."type", "expires_at" = EXCLUDED."expires_at",
    "issued_before" = EXCLUDED."issued_before", "tags" = EXCLUDED."tags", "updated_at" = now()`;

const CHECK = `SELECT 1 FROM "revocations" WHERE "expires_at" > now() AND (
    ("type" = 'JTI' AND "id" = $1) OR ("type" = 'API_SESSION' AND "id" = $2)
    OR ("type" = 'IDENTITY' AND "id" = $3 AND $4::timestamptz < "issued_before")) LIMIT 1`;

/** Revocations in the `revocations` table only (no Redis markers): the provider's minimal port. */
export function sqlRevocations(pool: Pool): RevocationPort {
  return {
    async revoke(type: RevocationType, id: string, opts = {}) {
      const now = Date.now();
      const expiresAt = opts.expiresAt ?? new Date(now + MAX_TOKEN_SECONDS * 1000);
      const issuedBefore = opts.issuedBefore ?? new Date(now);
      await pool.query(UPSERT, [id, type, expiresAt, issuedBefore, JSON.stringify(opts.tags ?? {})]);
    },
    async isRevoked(t: RevocableToken) {
      const iat = typeof t.iat === 'number' ? new Date(t.iat * 1000) : null;
      const { rows } = await pool.query(CHECK, [t.jti ?? null, t.z_asid ?? null, t.sub ?? null, iat]);
      return rows.length > 0;
    },
  };
}
