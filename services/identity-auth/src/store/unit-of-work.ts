import { outboxInsert } from '@ziti/messaging';
import type { Pool } from 'pg';
import type { DomainEvent, Repositories, Transaction, UnitOfWork } from '../domain/ports.js';
import { toChangeEvent } from '../events/events.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { PrismaApiSessionRepository } from './api-session-repo.js';
import { PrismaAuthenticatorRepository } from './authenticator-repo.js';
import { PrismaAuthPolicyRepository, PrismaIdentityTypeRepository } from './catalog-repo.js';
import { SCHEMA } from '../schema.js';
import type { Db } from './db.js';
import { PrismaIdentityRepository } from './identity-repo.js';

function repositories(db: Db, pool: Pool): Repositories {
  return {
    identities: new PrismaIdentityRepository(db, pool),
    authenticators: new PrismaAuthenticatorRepository(db),
    apiSessions: new PrismaApiSessionRepository(db, pool),
    identityTypes: new PrismaIdentityTypeRepository(db, pool),
    authPolicies: new PrismaAuthPolicyRepository(db),
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
}
