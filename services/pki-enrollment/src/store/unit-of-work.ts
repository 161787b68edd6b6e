import { newChangeEvent, outboxInsert } from '@ziti/messaging';
import type { Pool } from 'pg';
import type { DomainEvent, Repositories, Transaction, UnitOfWork } from '../domain/ports.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { SCHEMA, SERVICE_NAME } from '../schema.js';
import { PrismaCaRepository } from './ca-repo.js';
import type { Db } from './db.js';
import { PrismaEnrollmentRepository } from './enrollment-repo.js';
import { PrismaPkiRepository, PrismaRouterCertRepository, PrismaSessionCertRepository } from './misc-repos.js';

function repositories(db: Db, pool: Pool): Repositories {
  return {
    enrollments: new PrismaEnrollmentRepository(db, pool),
    cas: new PrismaCaRepository(db, pool),
    routerCerts: new PrismaRouterCertRepository(db),
    sessionCerts: new PrismaSessionCertRepository(db, pool),
    pki: new PrismaPkiRepository(db),
  };
}

/**
 * The events of pki-enrollment (subject `ziti.events.pki-enrollment.<type>`):
 * - `ca.verified` `{ caId }`
 * - `ca.deleted` `{ caId }`, e.g. `{ "caId": "x1Y2z3" }`: identity-auth deletes the certificate
 *   authenticators the CA issued (it is also asked synchronously with DeleteCaAuthenticators).
 */
function toChangeEvent(e: DomainEvent) {
  return newChangeEvent(SERVICE_NAME, e.type, { caId: e.caId });
}

/** Prisma interactive transactions with the outbox; the relay is nudged after a commit that emitted. */
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
