export { type MigrateOptions, migrate } from './migrate.js';
export { createSchemaPool, instrumentPool, probePostgres, PG_UNIQUE_VIOLATION, PG_FOREIGN_KEY_VIOLATION, pgErrorCode } from './pool.js';
export { type PreparedQuery, prepared, statementName } from './prepared.js';
export { batched } from './batch.js';
export {
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  type DumpSchemaOptions,
  type HeldSnapshot,
  controlLine,
  countEntities,
  dumpSchema,
  exportSnapshot,
  foreignKeyOrder,
  isSnapshotId,
  quoteIdent,
  type SchemaMaintenanceOptions,
  schemaMaintenance,
} from './snapshot.js';
export { type RestoreContext, type RestoreOptions, type RestoredContext, RestoreRefused, migrationNames, readSnapshotContexts, restoreSnapshot } from './restore.js';
export { SNAPSHOT_PREFIX, type SnapshotFileWriter, createSnapshotFile, snapshotFileName } from './snapshot-file.js';
