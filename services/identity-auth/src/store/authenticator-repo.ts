import { batched, prepared } from '@ziti/db-kit';
import { ApiError } from '@ziti/errors';
import type { Pool } from 'pg';
import type { AuthPolicy, AuthenticatorView, CertLogin, UpdbLogin } from '../domain/auth-model.js';
import type { ListRequest, Page } from '../domain/model.js';
import type { AuthenticatorRepository, NewAuthenticator, StoredAuthenticator } from '../domain/ports.js';
import type { Prisma } from '../generated/prisma/client.js';
import { toAuthPolicy } from './auth-policy-repo.js';
import { type Db, json, mapped } from './db.js';
import { traceOf } from './identity-repo.js';
import { inIdOrder, listIds } from './list-query.js';
import { AUTHENTICATOR_QUERY } from './query-schemas.js';

const VIEW_INCLUDE = { identity: { select: { name: true } } } as const satisfies Prisma.AuthenticatorInclude;
type ViewRow = Prisma.AuthenticatorGetPayload<{ include: typeof VIEW_INCLUDE }>;

interface LoginRow {
  authenticatorId: string;
  identityId: string;
  password: string | null;
  salt: string | null;
  failedAttempts: number;
  name: string;
  externalId: string | null;
  isAdmin: boolean;
  isDefaultAdmin: boolean;
  permissions: string[] | null;
  typeId: string;
  disabled: boolean;
  disabledUntil: Date | string | null;
  sdkInfo: unknown;
  envInfo: unknown;
  traceId: string | null;
  traceUntil: Date | string | null;
  traceChannels: string[] | null;
  mfaVerified: boolean;
  /** The auth_policies row as JSON (snake_case columns). */
  policy: Record<string, unknown>;
}

/** An auth_policies row rendered by `row_to_json`. */
function policyFromRow(p: Record<string, unknown>): AuthPolicy {
  return toAuthPolicy({
    id: p.id,
    name: p.name,
    isSystem: p.is_system,
    primaryCertAllowed: p.primary_cert_allowed,
    primaryCertAllowExpiredCerts: p.primary_cert_allow_expired_certs,
    primaryUpdbAllowed: p.primary_updb_allowed,
    primaryUpdbMinPasswordLength: p.primary_updb_min_password_length,
    primaryUpdbRequireSpecialChar: p.primary_updb_require_special_char,
    primaryUpdbRequireNumberChar: p.primary_updb_require_number_char,
    primaryUpdbRequireMixedCase: p.primary_updb_require_mixed_case,
    primaryUpdbMaxAttempts: p.primary_updb_max_attempts,
    primaryUpdbLockoutDurationMins: p.primary_updb_lockout_duration_minutes,
    primaryExtJwtAllowed: p.primary_ext_jwt_allowed,
    primaryExtJwtAllowedSigners: p.primary_ext_jwt_allowed_signers ?? [],
    secondaryRequireTotp: p.secondary_require_totp,
    secondaryRequiredExtJwtSigner: p.secondary_required_ext_jwt_signer,
    tags: p.tags,
    createdAt: new Date(p.created_at as string),
    updatedAt: new Date(p.updated_at as string),
  } as Parameters<typeof toAuthPolicy>[0]);
}

function toView(r: ViewRow): AuthenticatorView {
  return {
    id: r.id,
    identityId: r.identityId,
    identityName: r.identity.name,
    method: r.method,
    username: r.username,
    certPem: r.certPem,
    fingerprint: r.fingerprint,
    isIssuedByNetwork: r.isIssuedByNetwork,
    isExtendRequested: r.isExtendRequested,
    isKeyRollRequested: r.isKeyRollRequested,
    extendRequestedAt: r.extendRequestedAt,
    lastAuthResolvedToRoot: r.lastAuthResolvedToRoot,
    lastExtendRolledKeys: r.lastExtendRolledKeys,
    tags: json(r.tags),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

const toStored = (r: Prisma.AuthenticatorGetPayload<object>): StoredAuthenticator => ({
  id: r.id,
  identityId: r.identityId,
  method: r.method,
  username: r.username,
  password: r.password,
  salt: r.salt,
  fingerprint: r.fingerprint,
  certPem: r.certPem,
  isIssuedByNetwork: r.isIssuedByNetwork,
  caId: r.caId,
  isExtendRequested: r.isExtendRequested,
  isKeyRollRequested: r.isKeyRollRequested,
  unverifiedCertPem: r.unverifiedCertPem,
  unverifiedFingerprint: r.unverifiedFingerprint,
  tags: json(r.tags),
});

/** The identity of a login row (the columns both logins select). */
function loginIdentity(r: LoginRow): UpdbLogin['identity'] {
  return {
    id: r.identityId,
    name: r.name,
    externalId: r.externalId,
    isAdmin: r.isAdmin,
    isDefaultAdmin: r.isDefaultAdmin,
    permissions: r.permissions ?? [],
    typeId: r.typeId,
    disabled: r.disabled,
    disabledUntil: r.disabledUntil === null ? null : new Date(r.disabledUntil),
    sdkInfo: json(r.sdkInfo),
    envInfo: json(r.envInfo),
    trace: traceOf(r.traceId, r.traceUntil, r.traceChannels),
  };
}

/** The identity, auth policy and MFA columns of both logins (authenticator alias "a"). */
const LOGIN_JOIN = `
  i."name", i."external_id" AS "externalId", i."is_admin" AS "isAdmin", i."is_default_admin" AS "isDefaultAdmin",
  i."permissions", i."type_id" AS "typeId", i."disabled", i."disabled_until" AS "disabledUntil",
  i."sdk_info" AS "sdkInfo", i."env_info" AS "envInfo", i."trace_id" AS "traceId", i."trace_until" AS "traceUntil",
  i."trace_channels" AS "traceChannels", COALESCE(m."is_verified", false) AS "mfaVerified", row_to_json(p) AS "policy"
  FROM "authenticators" a
  JOIN "identities" i ON i."id" = a."identity_id"
  JOIN "auth_policies" p ON p."id" = i."auth_policy_id"
  LEFT JOIN "mfas" m ON m."identity_id" = i."id"`;

/** The updb logins of a batch of usernames (one row per username that has one; see `findUpdbLogin`). */
const UPDB_LOGINS = `SELECT a."username", a."id" AS "authenticatorId", a."identity_id" AS "identityId", a."password", a."salt",
  a."failed_attempts" AS "failedAttempts",
  ${LOGIN_JOIN}
  WHERE a."username" = ANY($1::text[]) AND a."method" = 'updb'`;

const CERT_LOGIN = `SELECT a."id" AS "authenticatorId", a."identity_id" AS "identityId", a."password", a."salt", a."failed_attempts" AS "failedAttempts",
        a."is_issued_by_network" AS "isIssuedByNetwork", a."is_extend_requested" AS "isExtendRequested",
        a."is_key_roll_requested" AS "isKeyRollRequested", a."last_auth_resolved_to_root" AS "lastAuthResolvedToRoot",
      ${LOGIN_JOIN}
      WHERE a."fingerprint" = $1 AND a."method" = 'cert'`;

/** Unique and foreign-key violations of authenticator writes, as the controller answers them. */
const CONSTRAINTS: Record<string, () => ApiError> = {
  authenticators_identity_id_method_key: () => ApiError.of('MAX_AUTHENTICATOR_METHODS_REACHED'),
  authenticators_fingerprint_key: () => ApiError.of('CERT_IN_USE'),
  authenticators_identity_id_fkey: () => ApiError.notFound(),
};

export class PrismaAuthenticatorRepository implements AuthenticatorRepository {
  constructor(
    private readonly db: Db,
    private readonly pool: Pool,
  ) {}

  /**
   * The login hot path: one query (straight on the pool) joining the credential, its identity, auth
   * policy and MFA state. Logins arriving in the same turn of the event loop share the statement
   * (`batched`): under load one round trip serves several of them.
   */
  async findUpdbLogin(username: string): Promise<UpdbLogin | null> {
    return this.updbLoginBatch(username);
  }

  private readonly updbLoginBatch = batched((usernames: string[]) => this.findUpdbLogins(usernames));

  /** Per username, in order: its updb login, or null (no such username, or no password set). */
  async findUpdbLogins(usernames: readonly string[]): Promise<(UpdbLogin | null)[]> {
    const distinct = [...new Set(usernames)];
    const { rows } = await this.pool.query<LoginRow & { username: string }>(prepared(UPDB_LOGINS, [distinct]));
    const byUsername = new Map(rows.map((r) => [r.username, r]));
    return usernames.map((username) => {
      const r = byUsername.get(username);
      if (!r || r.password === null || r.salt === null) return null;
      return {
        authenticatorId: r.authenticatorId,
        identityId: r.identityId,
        username,
        password: r.password,
        salt: r.salt,
        failedAttempts: Number(r.failedAttempts),
        identity: loginIdentity(r),
        policy: policyFromRow(r.policy),
        mfaVerified: r.mfaVerified,
      };
    });
  }

  async findCertLogin(fingerprint: string): Promise<CertLogin | null> {
    const { rows } = await this.pool.query<LoginRow & { isIssuedByNetwork: boolean; isExtendRequested: boolean; isKeyRollRequested: boolean; lastAuthResolvedToRoot: boolean }>(
      prepared(CERT_LOGIN, [fingerprint]),
    );
    const r = rows[0];
    if (!r) return null;
    return {
      authenticator: {
        id: r.authenticatorId,
        identityId: r.identityId,
        isIssuedByNetwork: r.isIssuedByNetwork,
        isExtendRequested: r.isExtendRequested,
        isKeyRollRequested: r.isKeyRollRequested,
        lastAuthResolvedToRoot: r.lastAuthResolvedToRoot,
      },
      identity: loginIdentity(r),
      policy: policyFromRow(r.policy),
      mfaVerified: r.mfaVerified,
    };
  }

  async find(id: string): Promise<StoredAuthenticator | null> {
    const r = await this.db.authenticator.findUnique({ where: { id } });
    return r ? toStored(r) : null;
  }

  async view(id: string): Promise<AuthenticatorView | null> {
    const r = await this.db.authenticator.findUnique({ where: { id }, include: VIEW_INCLUDE });
    return r ? toView(r) : null;
  }

  async list(req: ListRequest, identityId?: string): Promise<Page<AuthenticatorView>> {
    const own = identityId !== undefined ? { sql: '"e"."identity_id" = $1', params: [identityId] } : undefined;
    const page = await listIds(this.pool, AUTHENTICATOR_QUERY, req, own);
    const rows = page.ids.length > 0 ? await this.db.authenticator.findMany({ where: { id: { in: page.ids } }, include: VIEW_INCLUDE }) : [];
    return { ...page, items: inIdOrder(page.ids, rows).map(toView) };
  }

  async listOfIdentity(identityId: string): Promise<AuthenticatorView[]> {
    const rows = await this.db.authenticator.findMany({ where: { identityId }, include: VIEW_INCLUDE, orderBy: { id: 'asc' } });
    return rows.map(toView);
  }

  async create(a: NewAuthenticator): Promise<void> {
    await mapped(
      () =>
        this.db.authenticator.create({
          data: {
            id: a.id,
            identityId: a.identityId,
            method: a.method,
            username: a.username ?? null,
            password: a.password ?? null,
            salt: a.salt ?? null,
            certPem: a.certPem ?? null,
            fingerprint: a.fingerprint ?? null,
            isIssuedByNetwork: a.isIssuedByNetwork ?? false,
            caId: a.caId ?? null,
            tags: a.tags as Prisma.InputJsonObject,
          },
        }),
      () => a.username,
      CONSTRAINTS,
    );
  }

  async update(id: string, change: { username?: string; password?: string; salt?: string; tags?: Record<string, unknown> }): Promise<void> {
    await mapped(
      () =>
        this.db.authenticator.update({
          where: { id },
          data: {
            ...(change.username !== undefined ? { username: change.username } : {}),
            ...(change.password !== undefined ? { password: change.password, salt: change.salt, failedAttempts: 0 } : {}),
            ...(change.tags !== undefined ? { tags: change.tags as Prisma.InputJsonObject } : {}),
            updatedAt: new Date(),
          },
        }),
      () => change.username,
      CONSTRAINTS,
    );
  }

  async delete(id: string): Promise<boolean> {
    return (await this.db.authenticator.deleteMany({ where: { id } })).count > 0;
  }

  async findForUpdate(id: string): Promise<StoredAuthenticator | null> {
    const locked = await this.db.$queryRaw<{ id: string }[]>`SELECT "id" FROM "authenticators" WHERE "id" = ${id} FOR UPDATE`;
    return locked.length > 0 ? this.find(id) : null;
  }

  async certsOfIdentity(identityId: string): Promise<StoredAuthenticator[]> {
    const rows = await this.db.authenticator.findMany({ where: { identityId, method: 'cert' }, orderBy: { id: 'asc' } });
    return rows.map(toStored);
  }

  async requestExtend(ids: string[], rollKeys: boolean, at: Date): Promise<void> {
    await this.db.authenticator.updateMany({
      where: { id: { in: ids }, method: 'cert' },
      data: { isExtendRequested: true, isKeyRollRequested: rollKeys, extendRequestedAt: at, updatedAt: at },
    });
  }

  async setPendingCert(id: string, certPem: string, fingerprint: string): Promise<void> {
    await this.db.authenticator.update({ where: { id }, data: { unverifiedCertPem: certPem, unverifiedFingerprint: fingerprint, updatedAt: new Date() } });
  }

  async promotePendingCert(id: string, rolledKeys: boolean): Promise<void> {
    await mapped(
      () => this.db.$executeRaw`
        UPDATE "authenticators" SET "cert_pem" = "unverified_cert_pem", "fingerprint" = "unverified_fingerprint",
          "unverified_cert_pem" = NULL, "unverified_fingerprint" = NULL, "is_extend_requested" = false, "is_key_roll_requested" = false,
          "extend_requested_at" = NULL, "last_extend_rolled_keys" = ${rolledKeys}, "updated_at" = now()
        WHERE "id" = ${id} AND "unverified_fingerprint" IS NOT NULL`,
      undefined,
      CONSTRAINTS,
    );
  }

  async deleteByCa(caId: string): Promise<number> {
    return (await this.db.authenticator.deleteMany({ where: { caId, method: 'cert' } })).count;
  }

  async countFailure(id: string): Promise<number> {
    const rows = await this.db.$queryRaw<{ n: number }[]>`
      UPDATE "authenticators" SET "failed_attempts" = "failed_attempts" + 1 WHERE "id" = ${id} RETURNING "failed_attempts" AS n`;
    return Number(rows[0]?.n ?? 0);
  }

  async setFailedAttempts(id: string, count: number): Promise<void> {
    await this.db.authenticator.updateMany({ where: { id }, data: { failedAttempts: count } });
  }
}
