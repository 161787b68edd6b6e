import type { Pool } from 'pg';
import type { LegacySession, LegacySessionStore } from '../domain/router-sessions.js';

/**
 * Legacy sessions as routers see them: not OIDC, no TOTP pending (the rule of `totpPending`: the
 * session's own flag or its identity's auth policy asks for it, and it is not complete), active
 * since $1; with the lowercase SHA-1 fingerprints of the identity's certificate authenticators.
 */
const SELECT_LEGACY = `SELECT s."id", s."token", s."identity_id",
    COALESCE((SELECT array_agg(DISTINCT lower(a."fingerprint")) FROM "authenticators" a
      WHERE a."identity_id" = s."identity_id" AND a."method" = 'cert' AND a."fingerprint" IS NOT NULL), '{}') AS "fingerprints"
  FROM "api_sessions" s JOIN "identities" i ON i."id" = s."identity_id" JOIN "auth_policies" p ON p."id" = i."auth_policy_id"
  WHERE s."kind" <> 'oidc' AND s."last_activity_at" > $1
    AND (s."is_mfa_complete" OR NOT (s."is_mfa_required" OR p."secondary_require_totp"))`;
const BY_IDS = `${SELECT_LEGACY} AND s."id" = ANY($2::text[]) ORDER BY s."id"`;
const AFTER = `${SELECT_LEGACY} AND s."id" > $2 ORDER BY s."id" LIMIT $3`;
/** One statement: the activity of every still-active legacy session of the tokens moves to $3. */
const TOUCH = `UPDATE "api_sessions" SET "last_activity_at" = GREATEST("last_activity_at", $3::timestamptz)
  WHERE "token" = ANY($1::text[]) AND "kind" <> 'oidc' AND "last_activity_at" > $2
  RETURNING "token", "identity_id"`;

interface Row {
  id: string;
  token: string;
  identity_id: string;
  fingerprints: string[];
}

const toSession = (r: Row): LegacySession => ({ id: r.id, token: r.token, identityId: r.identity_id, certFingerprints: [...r.fingerprints].sort() });

export class SqlLegacySessionStore implements LegacySessionStore {
  constructor(private readonly pool: Pool) {}

  async listByIds(ids: readonly string[], activeSince: Date): Promise<LegacySession[]> {
    const { rows } = await this.pool.query<Row>(BY_IDS, [activeSince, ids]);
    return rows.map(toSession);
  }

  async listAfter(afterId: string, limit: number, activeSince: Date): Promise<LegacySession[]> {
    const { rows } = await this.pool.query<Row>(AFTER, [activeSince, afterId, limit]);
    return rows.map(toSession);
  }

  async touchByTokens(tokens: readonly string[], activeSince: Date, at: Date): Promise<{ token: string; identityId: string }[]> {
    const { rows } = await this.pool.query<{ token: string; identity_id: string }>(TOUCH, [tokens, activeSince, at]);
    return rows.map((r) => ({ token: r.token, identityId: r.identity_id }));
  }
}
