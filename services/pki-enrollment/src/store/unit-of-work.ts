import { newChangeEvent, type OutboxRelay, runPrismaWithOutbox } from '@ziti/messaging';
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
 * - `api-session-certificate.created` / `.deleted` `{ certificateId, apiSessionId, identityId }`,
 *   e.g. `{ "certificateId": "c1D2e3", "apiSessionId": "cmf0…", "identityId": "u7V8w9" }` (ids
 *   only): fabric reads the session's fingerprints again (ListApiSessionCertificateFingerprints)
 *   and pushes the session to routers. Not raised when the session's end deletes its certificates.
 */
function toChangeEvent(e: DomainEvent) {
  if (e.type === 'ca.deleted' || e.type === 'ca.verified') return newChangeEvent(SERVICE_NAME, e.type, { caId: e.caId });
  return newChangeEvent(SERVICE_NAME, e.type, { certificateId: e.certificateId, apiSessionId: e.apiSessionId, identityId: e.identityId });
}

/**
 * Prisma interactive transactions with the outbox: events emitted inside `run` are inserted in
 * the same transaction and handed to the relay, which publishes them once the transaction has
 * committed (`publishOnCommit`).
 */
export class PrismaUnitOfWork implements UnitOfWork {
  readonly repos: Repositories;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly pool: Pool,
    private readonly relay: Pick<OutboxRelay, 'publishOnCommit'>,
  ) {
    this.repos = repositories(prisma, pool);
  }

  run<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    return runPrismaWithOutbox<Db, T>(this.relay, this.prisma, SCHEMA, (db, emit, lock) =>
      fn({ ...repositories(db, this.pool), emit: (...events: DomainEvent[]) => emit(events.map(toChangeEvent)), lock }),
    );
  }
}
