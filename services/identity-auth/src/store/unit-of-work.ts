import { batched, prepared } from '@ziti/db-kit';
import { ApiError } from '@ziti/errors';
import { type ChangeEvent, type OutboxRelay, runPrismaWithOutbox } from '@ziti/messaging';
import type { Pool } from 'pg';
import type { ApiSession } from '../domain/model.js';
import type { DomainEvent, Repositories, Transaction, UnitOfWork } from '../domain/ports.js';
import { toChangeEvent } from '../events/events.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { PrismaApiSessionRepository } from './api-session-repo.js';
import { PrismaAuthenticatorRepository } from './authenticator-repo.js';
import { PrismaAuthPolicyRepository } from './auth-policy-repo.js';
import { PrismaIdentityTypeRepository } from './catalog-repo.js';
import { PrismaMfaRepository } from './mfa-repo.js';
import { PrismaSignerRepository } from './signer-repo.js';
import { SCHEMA } from '../schema.js';
import { type Db, mapped, mapDbError } from './db.js';
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
  };
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
   * commits asynchronously (see `openDatabase`).
   */
  constructor(
    private readonly prisma: PrismaClient,
    private readonly pool: Pool,
    private readonly relay: Pick<OutboxRelay, 'publishOnCommit'>,
    private readonly sessionWrites: Pool = pool,
  ) {
    this.repos = repositories(prisma, pool);
  }

  run<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    return runPrismaWithOutbox<Db, T>(this.relay, this.prisma, SCHEMA, (db, emit, lock) =>
      fn({ ...repositories(db, this.pool), emit: (...events: DomainEvent[]) => emit(events.map(toChangeEvent)), lock }),
    );
  }

  /**
   * A login's new session, its events and, when they changed, the identity's reported SDK and
   * environment info: one statement. Logins that arrive in the same turn of the event loop and
   * report no new info share one statement (`batched`); the rest, and every login of a batch that
   * a concurrent identity delete broke, go one by one.
   */
  async createSession(s: ApiSession, info: ReportedInfo, events: DomainEvent[]): Promise<void> {
    const item = { session: s, events: events.map(toChangeEvent) };
    const write =
      info.sdkInfo === undefined && info.envInfo === undefined
        ? this.sessionBatch(item).then((failure) => {
            if (failure) throw failure;
          })
        : this.createSessionAlone(item, info);
    // Handed over before the statement is sent: the relay publishes the events once it committed.
    await this.relay.publishOnCommit(item.events, write);
  }

  private readonly sessionBatch = batched((items: NewSession[]) => this.insertSessions(items));

  /** Per item, in order: undefined when stored, else its error (a batch that fails retries each item alone). */
  private async insertSessions(items: NewSession[]): Promise<(unknown | undefined)[]> {
    try {
      await this.writeSessions(items, {});
      return items.map(() => undefined);
    } catch (err) {
      if (items.length === 1) return [mapDbError(err, undefined, SESSION_CONSTRAINTS)];
      return Promise.all(items.map((item) => this.createSessionAlone(item, {}).then(() => undefined, (e: unknown) => e)));
    }
  }

  private createSessionAlone(item: NewSession, info: ReportedInfo): Promise<void> {
    return mapped(() => this.writeSessions([item], info), undefined, SESSION_CONSTRAINTS);
  }

  /** Sessions with their events; `info`, when given, is the reported info of the one identity they belong to. */
  private async writeSessions(items: NewSession[], info: ReportedInfo): Promise<void> {
    const sessions = items.map(({ session: s }) => ({
      id: s.id, token: s.token, identity_id: s.identityId, authenticator_id: s.authenticatorId, ip_address: s.ipAddress,
      config_types: s.configTypes, is_mfa_required: s.isMfaRequired, is_mfa_complete: s.isMfaComplete,
      is_cert_extendable: s.isCertExtendable, is_cert_extend_requested: s.isCertExtendRequested,
      is_cert_key_roll_requested: s.isCertKeyRollRequested, improper_client_cert_chain: s.improperClientCertChain,
      last_activity_at: s.lastActivityAt.toISOString(), tags: s.tags, created_at: s.createdAt.toISOString(), updated_at: s.updatedAt.toISOString(),
    }));
    const events = items.flatMap(({ events }) => events).map((e) => ({
      id: e.id, type: e.type, source: e.source, data: e.data ?? null, occurred_at: e.occurredAt,
    }));
    const reported = info.sdkInfo !== undefined || info.envInfo !== undefined;
    await this.sessionWrites.query(
      prepared(INSERT_SESSIONS, [
        JSON.stringify(sessions),
        JSON.stringify(events),
        info.sdkInfo === undefined ? null : JSON.stringify(info.sdkInfo),
        info.envInfo === undefined ? null : JSON.stringify(info.envInfo),
        reported ? items[0]!.session.identityId : null,
      ]),
    );
  }
}

type ReportedInfo = { sdkInfo?: Record<string, unknown>; envInfo?: Record<string, unknown> };

interface NewSession {
  session: ApiSession;
  events: ChangeEvent<unknown>[];
}

/** A session whose identity is gone (deleted while it logged in) is a failed login. */
const SESSION_CONSTRAINTS = { api_sessions_identity_id_fkey: () => ApiError.of('INVALID_AUTH') };

/**
 * New sessions (a jsonb array of rows) and their outbox events (another), and the SDK and
 * environment info an identity reported ($3, $4: null when unchanged, $5: that identity), in one
 * statement.
 */
const INSERT_SESSIONS = `WITH s AS (
    INSERT INTO "api_sessions" ("id", "token", "identity_id", "authenticator_id", "ip_address", "config_types", "is_mfa_required",
      "is_mfa_complete", "is_cert_extendable", "is_cert_extend_requested", "is_cert_key_roll_requested", "improper_client_cert_chain",
      "last_activity_at", "tags", "created_at", "updated_at")
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS x("id" text, "token" text, "identity_id" text, "authenticator_id" text, "ip_address" text,
      "config_types" text[], "is_mfa_required" boolean, "is_mfa_complete" boolean, "is_cert_extendable" boolean,
      "is_cert_extend_requested" boolean, "is_cert_key_roll_requested" boolean, "improper_client_cert_chain" boolean,
      "last_activity_at" timestamptz, "tags" jsonb, "created_at" timestamptz, "updated_at" timestamptz)),
  o AS (
    INSERT INTO "outbox_events" ("id", "type", "source", "data", "occurred_at")
    SELECT e."id", e."type", e."source", COALESCE(e."data", 'null'::jsonb), e."occurred_at"
    FROM jsonb_to_recordset($2::jsonb) AS e("id" uuid, "type" text, "source" text, "data" jsonb, "occurred_at" timestamptz)),
  i AS (
    UPDATE "identities" SET "sdk_info" = COALESCE($3::jsonb, "sdk_info"), "env_info" = COALESCE($4::jsonb, "env_info")
    WHERE "id" = $5::text AND ($3::jsonb IS NOT NULL OR $4::jsonb IS NOT NULL))
  SELECT 1`;
