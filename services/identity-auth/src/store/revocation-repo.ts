import { prepared } from '@ziti/db-kit';
import type { Pool } from 'pg';
import type { ListRequest, Page } from '../domain/model.js';
import type { Revocation, RevocationRepository } from '../domain/ports.js';
import type { RevocableToken, RevocationType } from '../oidc/ports.js';
import type { Prisma } from '../generated/prisma/client.js';
import { type Db, json } from './db.js';
import { inIdOrder, listIds } from './list-query.js';
import { REVOCATION_QUERY } from './query-schemas.js';

const toRevocation = (r: Prisma.RevocationGetPayload<object>): Revocation => ({
  id: r.id,
  type: r.type as RevocationType,
  expiresAt: r.expiresAt,
  issuedBefore: r.issuedBefore,
  tags: json(r.tags),
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

/**
 * Whether a token is revoked (every bearer resolution a gateway did not have cached): its `jti`
 * ($1), its API session ($2), or its identity ($3) when issued (`iat` in ms, $4) before the
 * cutoff. A missing claim is null and matches nothing; an IDENTITY revocation without a cutoff
 * revokes every token of the identity. Prepared.
 */
const IS_REVOKED = `SELECT EXISTS (SELECT 1 FROM "revocations" WHERE "id" IN ($1::text, $2::text, $3::text) AND (
    ("type" = 'JTI' AND "id" = $1::text) OR ("type" = 'API_SESSION' AND "id" = $2::text)
    OR ("type" = 'IDENTITY' AND "id" = $3::text AND $4::double precision < COALESCE(extract(epoch FROM "issued_before")::double precision * 1000, 'Infinity'::double precision))
  )) AS "revoked"`;

const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);

export class PrismaRevocationRepository implements RevocationRepository {
  constructor(
    private readonly db: Db,
    private readonly pool: Pool,
  ) {}

  async put(r: Pick<Revocation, 'id' | 'type' | 'expiresAt' | 'issuedBefore' | 'tags'>): Promise<Revocation> {
    // Create-or-replace, as OpenZiti's CreateOrReplace (delete, then create): every field is fresh.
    const rows = await this.db.$queryRaw<Prisma.RevocationGetPayload<object>[]>`
      INSERT INTO "revocations" ("id", "type", "expires_at", "issued_before", "tags", "created_at", "updated_at")
      VALUES (${r.id}, ${r.type}, ${r.expiresAt}, ${r.issuedBefore}, ${JSON.stringify(r.tags)}::jsonb, now(), now())
      ON CONFLICT ("id") DO UPDATE SET "type" = EXCLUDED."type", "expires_at" = EXCLUDED."expires_at",
        "issued_before" = EXCLUDED."issued_before", "tags" = EXCLUDED."tags", "created_at" = now(), "updated_at" = now()
      RETURNING "id", "type", "expires_at" AS "expiresAt", "issued_before" AS "issuedBefore", "tags", "created_at" AS "createdAt",
        "updated_at" AS "updatedAt"`;
    return toRevocation(rows[0]!);
  }

  async find(id: string): Promise<Revocation | null> {
    const r = await this.db.revocation.findUnique({ where: { id } });
    return r ? toRevocation(r) : null;
  }

  async list(req: ListRequest): Promise<Page<Revocation>> {
    const page = await listIds(this.pool, REVOCATION_QUERY, req);
    const rows = page.ids.length > 0 ? await this.db.revocation.findMany({ where: { id: { in: page.ids } } }) : [];
    return { ...page, items: inIdOrder(page.ids, rows).map(toRevocation) };
  }

  async isRevoked(t: RevocableToken): Promise<boolean> {
    const iatMs = typeof t.iat === 'number' && Number.isFinite(t.iat) ? t.iat * 1000 : 0;
    const { rows } = await this.pool.query<{ revoked: boolean }>(prepared(IS_REVOKED, [str(t.jti), str(t.z_asid), str(t.sub), iatMs]));
    return rows[0]?.revoked === true;
  }

  async listLive(ids: readonly string[] | undefined, afterId: string, limit: number, now: Date): Promise<Revocation[]> {
    const rows = ids
      ? await this.db.revocation.findMany({ where: { id: { in: [...ids] }, expiresAt: { gt: now } }, orderBy: { id: 'asc' } })
      : await this.db.revocation.findMany({ where: { id: { gt: afterId }, expiresAt: { gt: now } }, orderBy: { id: 'asc' }, take: limit });
    return rows.map(toRevocation);
  }

  async deleteExpired(now: Date, max: number): Promise<number> {
    // A bounded batch, SKIP LOCKED: replicas pruning at once take different rows.
    return this.db.$executeRaw`
      DELETE FROM "revocations" WHERE "id" IN (
        SELECT "id" FROM "revocations" WHERE "expires_at" < ${now} ORDER BY "expires_at" LIMIT ${max} FOR UPDATE SKIP LOCKED)`;
  }
}
