import { runContextProcess } from '@ziti/service-kit';
import { loadConfig } from './config.js';
import { SERVICE_NAME } from './schema.js';
import { startService } from './service.js';

// Standalone process (`npm start -w @ziti/fabric`): NATS, Redis and PostgreSQL from their URLs,
// waited for at start; metrics on port 9106 unless set. Migrations are a separate step
// (`npm run migrate -w @ziti/fabric`, a Job on Kubernetes).
runContextProcess({
  name: SERVICE_NAME,
  metricsPort: 9106,
  loadConfig,
  start: (config, deps) => startService({ ...config, ...deps }),
});
