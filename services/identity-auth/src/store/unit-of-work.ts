import { prepared } from '@ziti/db-kit';
import { ApiError } from '@ziti/errors';
import { outboxInsert } from '@ziti/messaging';
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
  };
}

/**
 * Prisma interactive transactions with the outbox: events emitted inside `run` are inserted in
 * the same transaction, and the relay is nudged once it committed.
 */
export class PrismaUnitOfWork implements UnitOfWork {
  readonly repos: Repositories;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly pool: Pool,
    private readonly afterCommit: () => void,
  ) {
    this.repos = repositories(prisma, pool);
  }

  async run<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    let emitted = false;
    const result = await this.prisma.$transaction(
      async (db) => {
        const tx: Transaction = {
          ...repositories(db, this.pool),
          emit: async (...events: DomainEvent[]) => {
            if (events.length === 0) return;
            const { text, values } = outboxInsert(events.map(toChangeEvent));
            await db.$executeRawUnsafe(text, ...values);
            emitted = true;
          },
          lock: async (name: string) => {
            await db.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`${SCHEMA}:${name}`}))`;
          },
        };
        return fn(tx);
      },
      { timeout: 15_000, maxWait: 10_000 },
    );
    if (emitted) this.afterCommit();
    return result;
  }

  async createSession(
    s: ApiSession,
    info: { sdkInfo?: Record<string, unknown>; envInfo?: Record<string, unknown> },
    events: DomainEvent[],
  ): Promise<void> {
    const values: unknown[] = [
      s.id, s.token, s.identityId, s.authenticatorId, s.ipAddress, s.configTypes, s.isMfaRequired, s.isMfaComplete,
      s.isCertExtendable, s.isCertExtendRequested, s.isCertKeyRollRequested, s.improperClientCertChain, s.lastActivityAt,
      JSON.stringify(s.tags), s.createdAt, s.updatedAt,
      info.sdkInfo === undefined ? null : JSON.stringify(info.sdkInfo), info.envInfo === undefined ? null : JSON.stringify(info.envInfo),
    ];
    const outbox = outboxInsert(events.map(toChangeEvent));
    const shift = values.length;
    values.push(...outbox.values);
    const text = `
      WITH s AS (
        INSERT INTO "api_sessions" ("id", "token", "identity_id", "authenticator_id", "ip_address", "config_types", "is_mfa_required",
          "is_mfa_complete", "is_cert_extendable", "is_cert_extend_requested", "is_cert_key_roll_requested", "improper_client_cert_chain",
          "last_activity_at", "tags", "created_at", "updated_at")
        VALUES ($1, $2, $3, $4, $5, $6::text[], $7, $8, $9, $10, $11, $12, $13, $14::jsonb, $15, $16)),
      i AS (
        UPDATE "identities" SET "sdk_info" = COALESCE($17::jsonb, "sdk_info"), "env_info" = COALESCE($18::jsonb, "env_info")
        WHERE "id" = $3 AND ($17::jsonb IS NOT NULL OR $18::jsonb IS NOT NULL)),
      o AS (${outbox.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + shift}`)})
      SELECT 1`;
    // One text per number of events (one for a login): prepared.
    await mapped(() => this.pool.query(prepared(text, values)), undefined, {
      api_sessions_identity_id_fkey: () => ApiError.of('INVALID_AUTH'),
    });
    if (events.length > 0) this.afterCommit();
  }
}
