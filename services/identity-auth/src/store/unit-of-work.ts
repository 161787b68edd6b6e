import { batched, prepared } from '@ziti/db-kit';
import { ApiError } from '@ziti/errors';
import { type ChangeEvent, type OutboxRelay, runPrismaWithOutbox } from '@ziti/messaging';
import type { Pool } from 'pg';
import type { ApiSession } from '../domain/model.js';
import type { DeletedSession, DomainEvent, Repositories, Transaction, UnitOfWork } from '../domain/ports.js';
import { EVENT_SOURCE, toChangeEvent } from '../events/events.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { PrismaApiSessionRepository } from './api-session-repo.js';
import { PrismaControllerSettingRepository } from './controller-setting-repo.js';
import { PrismaAuthenticatorRepository } from './authenticator-repo.js';
import { PrismaAuthPolicyRepository } from './auth-policy-repo.js';
import { PrismaIdentityTypeRepository } from './catalog-repo.js';
import { PrismaMfaRepository } from './mfa-repo.js';
import { PrismaRevocationRepository } from './revocation-repo.js';
import { PrismaSignerRepository } from './signer-repo.js';
import { SCHEMA } from '../schema.js';
import { type Db, mapped } from './db.js';
import { PrismaIdentityRepository } from './identity-repo.js';

function repositories(db: Db, pool: Pool): Repositories {
  return {
    identities: new PrismaIdentityRepository(db, pool),
    authenticators: new PrismaAuthenticatorRepository(db, pool),
    apiSessions: new PrismaApiSessionRepository(db, pool),
    identityTypes: new PrismaIdentityTypeRepository(db, pool),
    authPolicies: new PrismaAuthPolicyRepository(db, pool),
    signers: new PrismaSignerRepository(db, pool),
    mfas: new PrismaMfaRepository(db),
    controllerSettings: new PrismaControllerSettingRepository(db, pool),
    revocations: new PrismaRevocationRepository(db, pool),
  };
}

/**
 * The bound on an identity's API sessions (`ZITI_MAX_API_SESSIONS_PER_IDENTITY`): a login that
 * would pass it deletes that identity's least recently active sessions in the statement that
 * inserts the new one, with their `api-session.deleted` outbox rows, and then hands them to
 * `evicted` (which drops their cached principals) before the login is answered.
 */
export interface SessionBound {
  /** 0: no bound. */
  maxPerIdentity: number;
  evicted(sessions: DeletedSession[]): Promise<void>;
}

/**
 * Prisma interactive transactions with the outbox: events emitted inside `run` are inserted in
 * the same transaction and handed to the relay, which publishes them once the transaction has
 * committed (`publishOnCommit`).
 */
export class PrismaUnitOfWork implements UnitOfWork {
  readonly repos: Repositories;

  /**
   * `sessionWrites` stores new sessions (by default `pool`); the service gives it a pool that
   * commits asynchronously (see `openDatabase`). `bound` limits the sessions of an identity
   * (none by default); the relay's `notify` flushes the `api-session.deleted` rows it writes.
   */
  constructor(
    private readonly prisma: PrismaClient,
    private readonly pool: Pool,
    private readonly relay: Pick<OutboxRelay, 'publishOnCommit'> & Partial<Pick<OutboxRelay, 'notify'>>,
    private readonly sessionWrites: Pool = pool,
    private readonly bound: SessionBound = { maxPerIdentity: 0, evicted: async () => undefined },
  ) {
    this.repos = repositories(prisma, pool);
  }

  run<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    return runPrismaWithOutbox<Db, T>(this.relay, this.prisma, SCHEMA, (db, emit, lock) =>
      fn({ ...repositories(db, this.pool), emit: (...events: DomainEvent[]) => emit(events.map(toChangeEvent)), lock }),
    );
  }

  /**
   * A login's new session and, when they changed, the identity's reported SDK and environment
   * info: one statement. Logins that arrive in the same turn of the event loop and report no new
   * info share one statement (`batched`, which runs each login of a failed batch again alone, so
   * a login whose identity a concurrent delete took away fails alone); the rest go one by one.
   */
  async createSession(s: ApiSession, info: ReportedInfo, resolvedToRoot?: boolean): Promise<void> {
    const login: NewSession = { s, resolvedToRoot };
    if (info.sdkInfo !== undefined || info.envInfo !== undefined) return this.createSessionAlone(login, info);
    await mapped(() => this.sessionBatch(login), undefined, SESSION_CONSTRAINTS);
  }

  private readonly sessionBatch = batched(async (logins: NewSession[]) => {
    await this.writeSessions(logins, {});
    return logins.map(() => undefined);
  });

  private createSessionAlone(login: NewSession, info: ReportedInfo): Promise<void> {
    return mapped(() => this.writeSessions([login], info), undefined, SESSION_CONSTRAINTS);
  }

  /** Sessions; `info`, when given, is the reported info of the one identity they belong to. */
  private async writeSessions(logins: NewSession[], info: ReportedInfo): Promise<void> {
    const sessions = logins.map((l) => l.s);
    const rows = logins.map(({ s, resolvedToRoot }) => ({
      id: s.id, token: s.token, identity_id: s.identityId, authenticator_id: s.authenticatorId, ip_address: s.ipAddress,
      config_types: s.configTypes, is_mfa_required: s.isMfaRequired, is_mfa_complete: s.isMfaComplete,
      is_cert_extendable: s.isCertExtendable, is_cert_extend_requested: s.isCertExtendRequested,
      is_cert_key_roll_requested: s.isCertKeyRollRequested, improper_client_cert_chain: s.improperClientCertChain,
      last_activity_at: s.lastActivityAt.toISOString(), tags: s.tags, created_at: s.createdAt.toISOString(), updated_at: s.updatedAt.toISOString(),
      resolved_to_root: resolvedToRoot ?? null, mfa_completed_at: s.mfaCompletedAt ? s.mfaCompletedAt.toISOString() : null, kind: s.kind ?? 'legacy', expires_at: s.expiresAt ? s.expiresAt.toISOString() : null,
    }));
    const reported = info.sdkInfo !== undefined || info.envInfo !== undefined;
    const created = sessions.filter(fullyAuthenticatedLegacy).map((s) => toChangeEvent({ type: 'api-session.created', apiSessionId: s.id, identityId: s.identityId }));
    const write = this.sessionWrites.query<EvictedRow>(
      prepared(INSERT_SESSIONS, [
        JSON.stringify(rows),
        info.sdkInfo === undefined ? null : JSON.stringify(info.sdkInfo),
        info.envInfo === undefined ? null : JSON.stringify(info.envInfo),
        reported ? sessions[0]!.identityId : null,
        this.bound.maxPerIdentity,
        EVENT_SOURCE,
        JSON.stringify(created.map(outboxRow)),
      ]),
    );
    // Handed over in the turn the statement starts (it commits on its own): published once it has.
    const { rows: evicted } = await this.relay.publishOnCommit(created, write);
    if (evicted.length === 0) return;
    this.relay.notify?.();
    await this.bound.evicted(evicted.map((r) => ({ id: r.id, token: r.token, identityId: r.identity_id, kind: r.kind === 'oidc' ? 'oidc' : 'legacy' })));
  }
}

/** A legacy session with no TOTP pending at its creation: routers may admit it at once. */
const fullyAuthenticatedLegacy = (s: ApiSession) => (s.kind ?? 'legacy') === 'legacy' && (!s.isMfaRequired || s.isMfaComplete);

/** An event as a row of the outbox (`jsonb_to_recordset` of INSERT_SESSIONS). */
const outboxRow = (e: ChangeEvent<unknown>) => ({ id: e.id, type: e.type, source: e.source, data: e.data, occurred_at: e.occurredAt, request_id: e.requestId ?? null });

type ReportedInfo = { sdkInfo?: Record<string, unknown>; envInfo?: Record<string, unknown> };

/** A login's session, and its certificate authenticator's new `lastAuthResolvedToRoot` when that changed. */
interface NewSession {
  s: ApiSession;
  resolvedToRoot: boolean | undefined;
}

/** A session the bound on an identity's sessions deleted. */
interface EvictedRow {
  id: string;
  token: string;
  identity_id: string;
  kind: string;
}

/** A session whose identity is gone (deleted while it logged in) is a failed login. */
const SESSION_CONSTRAINTS = { api_sessions_identity_id_fkey: () => ApiError.of('INVALID_AUTH') };

/**
 * New sessions (a jsonb array of rows), the `lastAuthResolvedToRoot` of the certificate
 * authenticators whose value changed with their login (`resolved_to_root`, null when unchanged) and
 * the SDK and environment info an identity reported ($2, $3: null when unchanged, $4: that
 * identity), in one statement. With a bound ($5 > 0) it also deletes, of each identity that logged
 * in, the least recently active sessions beyond the bound (counting the new ones; the statement
 * does not see its own inserts) with an `api-session.deleted` outbox row each (source $6), and
 * returns them. Rows a concurrent statement holds are skipped (`SKIP LOCKED`), so two logins of one
 * identity at once each evict their own share; the count does not see the other's uncommitted
 * session, so the bound may be passed by the logins in flight for that instant. $7: the outbox rows
 * (`api-session.created`) of the new sessions that are fully authenticated, made by the caller,
 * who hands the same events to the relay (`publishOnCommit`) as the statement starts.
 */
const INSERT_SESSIONS = `WITH s AS (
    INSERT INTO "api_sessions" ("id", "token", "identity_id", "authenticator_id", "ip_address", "config_types", "is_mfa_required",
      "is_mfa_complete", "is_cert_extendable", "is_cert_extend_requested", "is_cert_key_roll_requested", "improper_client_cert_chain",
      "last_activity_at", "tags", "created_at", "updated_at", "mfa_completed_at", "kind", "expires_at")
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS x("id" text, "token" text, "identity_id" text, "authenticator_id" text, "ip_address" text,
      "config_types" text[], "is_mfa_required" boolean, "is_mfa_complete" boolean, "is_cert_extendable" boolean,
      "is_cert_extend_requested" boolean, "is_cert_key_roll_requested" boolean, "improper_client_cert_chain" boolean,
      "last_activity_at" timestamptz, "tags" jsonb, "created_at" timestamptz, "updated_at" timestamptz,
      "mfa_completed_at" timestamptz, "kind" text, "expires_at" timestamptz)),
  i AS (
    UPDATE "identities" SET "sdk_info" = COALESCE($2::jsonb, "sdk_info"), "env_info" = COALESCE($3::jsonb, "env_info")
    WHERE "id" = $4::text AND ($2::jsonb IS NOT NULL OR $3::jsonb IS NOT NULL)),
  a AS (
    UPDATE "authenticators" SET "last_auth_resolved_to_root" = r."resolved_to_root", "updated_at" = now()
    FROM jsonb_to_recordset($1::jsonb) AS r("authenticator_id" text, "resolved_to_root" boolean)
    WHERE r."resolved_to_root" IS NOT NULL AND "authenticators"."id" = r."authenticator_id"),
  n AS (
    SELECT l."identity_id", count(*)::int AS "k" FROM jsonb_to_recordset($1::jsonb) AS l("identity_id" text)
    WHERE $5::int > 0 GROUP BY l."identity_id"),
  d AS (
    DELETE FROM "api_sessions" WHERE "id" IN (
      SELECT o."id" FROM n CROSS JOIN LATERAL (
        SELECT e."id" FROM "api_sessions" e WHERE e."identity_id" = n."identity_id"
        ORDER BY e."last_activity_at", e."created_at", e."id"
        LIMIT GREATEST((SELECT count(*) FROM "api_sessions" c WHERE c."identity_id" = n."identity_id") + n."k" - $5::int, 0)
        FOR UPDATE SKIP LOCKED) o)
    RETURNING "id", "token", "identity_id", "kind"),
  ev AS (
    INSERT INTO "outbox_events" ("id", "type", "source", "data", "occurred_at")
    SELECT gen_random_uuid(), 'api-session.deleted', $6::text,
      jsonb_build_object('apiSessionId', d."id", 'identityId', d."identity_id", 'tokenHashes', jsonb_build_array(encode(sha256(convert_to(d."token", 'UTF8')), 'hex'))),
      now()
    FROM d),
  cr AS (
    INSERT INTO "outbox_events" ("id", "type", "source", "data", "occurred_at", "request_id")
    SELECT c."id", c."type", c."source", c."data", c."occurred_at", c."request_id"
    FROM jsonb_to_recordset($7::jsonb) AS c("id" uuid, "type" text, "source" text, "data" jsonb, "occurred_at" timestamptz, "request_id" text))
  SELECT "id", "token", "identity_id", "kind" FROM d`;
