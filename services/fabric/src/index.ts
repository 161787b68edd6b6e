export { SERVICE_NAME, SCHEMA, MIGRATIONS_DIR, runMigrations } from './schema.js';
export { type ServiceDeps, type RunningService, startService } from './service.js';
export { type Config, loadConfig } from './config.js';
