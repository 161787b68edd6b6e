export { type MigrateOptions, migrate } from './migrate.js';
export { createSchemaPool, PG_UNIQUE_VIOLATION, PG_FOREIGN_KEY_VIOLATION, pgErrorCode } from './pool.js';
export { type PreparedQuery, prepared, statementName } from './prepared.js';
export { batched } from './batch.js';
