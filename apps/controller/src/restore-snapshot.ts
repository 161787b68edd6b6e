import { resolve } from 'node:path';
import { type RestoreContext, type RestoredContext, restoreSnapshot } from '@ziti/db-kit';
import * as identityAuth from '@ziti/identity-auth';
import * as pkiEnrollment from '@ziti/pki-enrollment';
import * as policy from '@ziti/policy';
import * as posture from '@ziti/posture';
import * as fabric from '@ziti/fabric';
import * as session from '@ziti/session';
import { EMBEDDED_DATABASE } from './controller.js';
import { lockDataDir } from './data-dir-lock.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';

/** Every context of this controller: its schema and migrations. */
export const CONTEXTS: readonly RestoreContext[] = [identityAuth, pkiEnrollment, policy, session, posture, fabric].map((c) => ({
  name: c.SERVICE_NAME,
  schema: c.SCHEMA,
  migrationsDir: c.MIGRATIONS_DIR,
}));

export interface RestoreControllerOptions {
  /** The snapshot file (`<dataDir>/snapshots/ziti-db-….jsonl.gz`). */
  file: string;
  /** An external PostgreSQL; without it the embedded one of `dataDir` (the controller must not be running). */
  databaseUrl?: string;
  dataDir: string;
  /** Replace schemas that already hold data. */
  replace?: boolean;
  log?: (m: string) => void;
}

/**
 * Restores a database snapshot (`POST /database/snapshot`) into the database of `databaseUrl`, or
 * into the embedded PostgreSQL of `dataDir`, which it starts for the restore while holding the
 * data directory's lock (so it refuses while a controller runs there).
 */
export async function restoreControllerSnapshot(opts: RestoreControllerOptions): Promise<RestoredContext[]> {
  const log = opts.log ?? (() => undefined);
  const file = resolve(opts.file);
  if (opts.databaseUrl) return restoreSnapshot({ databaseUrl: opts.databaseUrl, file, contexts: CONTEXTS, replace: opts.replace, log });
  const dataDir = resolve(opts.dataDir);
  const lock = lockDataDir(dataDir);
  try {
    const pg = await startEmbeddedPostgres({ dataDir, database: EMBEDDED_DATABASE, previousController: lock.previous, log });
    try {
      return await restoreSnapshot({ databaseUrl: pg.databaseUrl, file, contexts: CONTEXTS, replace: opts.replace, log });
    } finally {
      await pg.stop();
    }
  } finally {
    lock.release();
  }
}
