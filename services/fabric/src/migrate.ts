import { requireEnv } from '@ziti/service-kit';
import { runMigrations } from './schema.js';

// `npm run migrate`: applies this service's migrations into its schema of DATABASE_URL.
runMigrations(requireEnv(process.env, 'DATABASE_URL'), console.log)
  .then((applied) => console.log(`${applied.length} migration(s) applied`))
  .catch((err) => {
    console.error(err);
    process.exit(1);
  });
