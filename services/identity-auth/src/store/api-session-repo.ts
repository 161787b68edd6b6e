import { prepared } from '@ziti/db-kit';
import { ApiError } from '@ziti/errors';
import type { Pool } from 'pg';
import type { ApiSession, ApiSessionKind, ApiSessionView, ApiSessionWithIdentity, CompletedMfa, ListRequest, Page } from '../domain/model.js';
import type { ApiSessionRepository, DeletedSession } from '../domain/ports.js';
import { Prisma } from '../generated/prisma/client.js';
import { type Db, json, mapped } from './db.js';
import { traceOf } from './identity-repo.js';
import { inIdOrder, listIds } from './list-query.js';
import { API_SESSION_QUERY } from './query-schemas.js';

type Row = Prisma.ApiSessionGetPayload<object>;

interface DeletedRow {
  id: string;
  token: string;
  identity_id: string;
  kind: string;
}
const RETURNING = Prisma.sql`RETURNING "id", "token", "identity_id", "kind"`;
const toDeleted = (r: DeletedRow): DeletedSession => ({ id: r.id, token: r.token, identityId: r.identity_id, kind: kindOf(r.kind) });
const kindOf = (k: string): ApiSessionKind => (k === 'oidc' ? 'oidc' : 'legacy');

const VIEW_INCLUDE = { identity: { select: { name: true } } } as const satisfies Prisma.ApiSessionInclude;

/**
 * A session with its identity's facts, in raw SQL (the principal resolution on every gateway
 * cache miss): the columns under their Prisma field names, the identity's and auth policy's
 * prefixed. Prepared; the condition is appended (`WHERE s."token" = $1` or `s."id" = $1`). A
 * `zt-session` never names an OIDC session (their tokens are bearer tokens).
 */
const WITH_IDENTITY = `SELECT s."id", s."token", s."identity_id" AS "identityId", s."authenticator_id" AS "authenticatorId",
  s."ip_address" AS "ipAddress", s."config_types" AS "configTypes", s."is_mfa_required" AS "isMfaRequired",
  s."is_mfa_complete" AS "isMfaComplete", s."mfa_completed_at" AS "mfaCompletedAt", s."is_cert_extendable" AS "isCertExtendable",
  s."is_cert_extend_requested" AS "isCertExtendRequested", s."is_cert_key_roll_requested" AS "isCertKeyRollRequested",
  s."improper_client_cert_chain" AS "improperClientCertChain", s."last_activity_at" AS "lastActivityAt", s."kind", s."expires_at" AS "expiresAt", s."tags",
  s."created_at" AS "createdAt", s."updated_at" AS "updatedAt",
  i."id" AS "i_id", i."name" AS "i_name", i."is_admin" AS "i_isAdmin", i."is_default_admin" AS "i_isDefaultAdmin",
  i."permissions" AS "i_permissions", i."type_id" AS "i_typeId", i."disabled" AS "i_disabled", i."disabled_until" AS "i_disabledUntil",
  i."external_id" AS "i_externalId", i."trace_id" AS "i_traceId", i."trace_until" AS "i_traceUntil",
  i."trace_channels" AS "i_traceChannels", p."secondary_require_totp" AS "p_requireTotp", p."secondary_required_ext_jwt_signer" AS "p_requiredSigner"
  FROM "api_sessions" s JOIN "identities" i ON i."id" = s."identity_id" JOIN "auth_policies" p ON p."id" = i."auth_policy_id"`;
const WITH_IDENTITY_BY_TOKEN = `${WITH_IDENTITY} WHERE s."token" = $1 AND s."kind" <> 'oidc'`;
const WITH_IDENTITY_BY_ID = `${WITH_IDENTITY} WHERE s."id" = $1`;

type RawFactsRow = Row & {
  i_id: string;
  i_name: string;
  i_isAdmin: boolean;
  i_isDefaultAdmin: boolean;
  i_permissions: string[] | null;
  i_typeId: string;
  i_disabled: boolean;
  i_disabledUntil: Date | null;
  i_externalId: string | null;
  i_traceId: string | null;
  i_traceUntil: Date | null;
  i_traceChannels: string[] | null;
  p_requireTotp: boolean;
  p_requiredSigner: string | null;
};

function toWithIdentity(r: RawFactsRow): ApiSessionWithIdentity {
  return {
    ...toSession(r),
    identity: {
      id: r.i_id,
      name: r.i_name,
      isAdmin: r.i_isAdmin,
      isDefaultAdmin: r.i_isDefaultAdmin,
      permissions: r.i_permissions ?? [],
      typeId: r.i_typeId,
      disabled: r.i_disabled,
      disabledUntil: r.i_disabledUntil,
      externalId: r.i_externalId,
      trace: traceOf(r.i_traceId, r.i_traceUntil, r.i_traceChannels),
    },
    secondary: { requireTotp: r.p_requireTotp, requiredExtJwtSigner: r.p_requiredSigner },
  };
}

function toSession(r: Row): ApiSession {
  return {
    id: r.id,
    token: r.token,
    identityId: r.identityId,
    authenticatorId: r.authenticatorId,
    ipAddress: r.ipAddress,
    configTypes: r.configTypes ?? [],
    isMfaRequired: r.isMfaRequired,
    isMfaComplete: r.isMfaComplete,
    mfaCompletedAt: r.mfaCompletedAt,
    isCertExtendable: r.isCertExtendable,
    isCertExtendRequested: r.isCertExtendRequested,
    isCertKeyRollRequested: r.isCertKeyRollRequested,
    improperClientCertChain: r.improperClientCertChain,
    lastActivityAt: r.lastActivityAt,
    kind: kindOf(r.kind),
    expiresAt: r.expiresAt ?? null,
    tags: json(r.tags),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

const toView = (r: Prisma.ApiSessionGetPayload<{ include: typeof VIEW_INCLUDE }>): ApiSessionView => ({
  ...toSession(r),
  identityName: r.identity.name,
});

export class PrismaApiSessionRepository implements ApiSessionRepository {
  constructor(
    private readonly db: Db,
    private readonly pool: Pool,
  ) {}

  /** A session of an identity deleted in the meantime: the login fails (401 INVALID_AUTH). */
  async create(s: ApiSession): Promise<void> {
    await mapped(() => this.db.apiSession.create({ data: { ...s, tags: s.tags as Prisma.InputJsonObject } }), undefined, {
      api_sessions_identity_id_fkey: () => ApiError.of('INVALID_AUTH'),
    });
  }

  async findById(id: string): Promise<ApiSession | null> {
    const r = await this.db.apiSession.findUnique({ where: { id } });
    return r ? toSession(r) : null;
  }

  async view(id: string): Promise<ApiSessionView | null> {
    const r = await this.db.apiSession.findUnique({ where: { id }, include: VIEW_INCLUDE });
    return r ? toView(r) : null;
  }

  async findByTokenWithIdentity(token: string): Promise<ApiSessionWithIdentity | null> {
    const { rows } = await this.pool.query<RawFactsRow>(prepared(WITH_IDENTITY_BY_TOKEN, [token]));
    return rows[0] ? toWithIdentity(rows[0]) : null;
  }

  async findByIdWithIdentity(id: string): Promise<ApiSessionWithIdentity | null> {
    const { rows } = await this.pool.query<RawFactsRow>(prepared(WITH_IDENTITY_BY_ID, [id]));
    return rows[0] ? toWithIdentity(rows[0]) : null;
  }

  async completeMfa(id: string, maxAgeSeconds?: number): Promise<CompletedMfa | null> {
    const maxAge = maxAgeSeconds ?? null;
    // The state before the update (the row locked), so the caller learns whether TOTP was pending until now.
    const rows = await this.db.$queryRaw<{ token: string; was_pending: boolean; kind: string }[]>`
      WITH old AS (
        SELECT s."id", ((s."is_mfa_required" OR p."secondary_require_totp") AND NOT s."is_mfa_complete") AS "was_pending"
        FROM "api_sessions" s JOIN "identities" i ON i."id" = s."identity_id" JOIN "auth_policies" p ON p."id" = i."auth_policy_id"
        WHERE s."id" = ${id} FOR UPDATE OF s)
      UPDATE "api_sessions" SET "is_mfa_required" = true, "is_mfa_complete" = true, "mfa_completed_at" = now(), "updated_at" = now()
      FROM old
      WHERE "api_sessions"."id" = old."id"
        AND (${maxAge}::double precision IS NULL OR "created_at" > now() - make_interval(secs => ${maxAge}::double precision))
      RETURNING "api_sessions"."token", old."was_pending", "api_sessions"."kind"`;
    const r = rows[0];
    return r ? { token: r.token, wasPending: r.was_pending, kind: kindOf(r.kind) } : null;
  }

  async extendOidc(id: string, expiresAt: Date): Promise<boolean> {
    const n = await this.db.$executeRaw`
      UPDATE "api_sessions" SET "expires_at" = ${expiresAt}, "updated_at" = now()
      WHERE "id" = ${id} AND "kind" = 'oidc' AND "expires_at" > now()`;
    return n > 0;
  }

  async setMfaCompletedAt(id: string, at: Date): Promise<string | null> {
    const rows = await this.db.$queryRaw<{ token: string }[]>`
      UPDATE "api_sessions" SET "mfa_completed_at" = ${at}, "updated_at" = now() WHERE "id" = ${id} RETURNING "token"`;
    return rows[0]?.token ?? null;
  }

  async tokensOfAuthPolicy(authPolicyId: string): Promise<string[]> {
    const rows = await this.db.$queryRaw<{ token: string }[]>`
      SELECT s."token" FROM "api_sessions" s JOIN "identities" i ON i."id" = s."identity_id" WHERE i."auth_policy_id" = ${authPolicyId}`;
    return rows.map((r) => r.token);
  }

  async list(req: ListRequest): Promise<Page<ApiSessionView>> {
    const page = await listIds(this.pool, API_SESSION_QUERY, req);
    const rows = page.ids.length > 0 ? await this.db.apiSession.findMany({ where: { id: { in: page.ids } }, include: VIEW_INCLUDE }) : [];
    return { ...page, items: inIdOrder(page.ids, rows).map(toView) };
  }

  async delete(id: string): Promise<DeletedSession | null> {
    const rows = await this.db.$queryRaw<DeletedRow[]>`DELETE FROM "api_sessions" WHERE "id" = ${id} ${RETURNING}`;
    return rows.map(toDeleted)[0] ?? null;
  }

  async deleteByIdentity(identityId: string, exceptId?: string): Promise<DeletedSession[]> {
    const rows =
      exceptId === undefined
        ? await this.db.$queryRaw<DeletedRow[]>`DELETE FROM "api_sessions" WHERE "identity_id" = ${identityId} ${RETURNING}`
        : await this.db.$queryRaw<DeletedRow[]>`DELETE FROM "api_sessions" WHERE "identity_id" = ${identityId} AND "id" <> ${exceptId} ${RETURNING}`;
    return rows.map(toDeleted);
  }

  async tokensOfIdentity(identityId: string): Promise<string[]> {
    const rows = await this.db.apiSession.findMany({ where: { identityId }, select: { token: true } });
    return rows.map((r) => r.token);
  }

  async touch(ids: string[], at: Date): Promise<void> {
    await this.db.apiSession.updateMany({ where: { id: { in: ids }, lastActivityAt: { lt: at } }, data: { lastActivityAt: at } });
  }

  async deleteIdleBefore(cutoff: Date, max: number): Promise<DeletedSession[]> {
    // A bounded batch, SKIP LOCKED: replicas sweeping at once take different rows.
    const rows = await this.db.$queryRaw<DeletedRow[]>`
      DELETE FROM "api_sessions" WHERE "id" IN (
        SELECT "id" FROM "api_sessions" WHERE "last_activity_at" < ${cutoff} AND "kind" <> 'oidc'
        ORDER BY "last_activity_at" LIMIT ${max} FOR UPDATE SKIP LOCKED)
      ${RETURNING}`;
    return rows.map(toDeleted);
  }

  async deleteExpiredOidc(now: Date, max: number): Promise<DeletedSession[]> {
    const rows = await this.db.$queryRaw<DeletedRow[]>`
      DELETE FROM "api_sessions" WHERE "id" IN (
        SELECT "id" FROM "api_sessions" WHERE "expires_at" < ${now} AND "kind" = 'oidc'
        ORDER BY "expires_at" LIMIT ${max} FOR UPDATE SKIP LOCKED)
      ${RETURNING}`;
    return rows.map(toDeleted);
  }
}
