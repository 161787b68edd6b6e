import { createInProcessBus, createMemoryCache } from '@ziti/messaging';
import { internalFetch, internalTestClient } from '@ziti/service-kit';
import { describeServiceShape } from '@ziti/test-kit';
import { SCHEMA, SERVICE_NAME, runMigrations, startService } from './index.js';

describeServiceShape({
  internal: { fetch: (url) => internalFetch(url), client: (Ctor, address) => internalTestClient(Ctor as never, address, 'policy') },
  name: SERVICE_NAME,
  schema: SCHEMA,
  runMigrations,
  migrations: ['20261121000000_init', '20261122000000_policy_model', '20261127000000_outbox_request_id', '20261201000000_terminator_hosting', '20261203000000_router_data_model_changes', '20261206000000_identity_hosting'],
  async start(databaseUrl) {
    const bus = createInProcessBus();
    const cache = createMemoryCache();
    const service = await startService({
      databaseUrl,
      bus,
      cache,
      internalSecret: 'test-secret',
      http: { host: '127.0.0.1', port: 0 },
      grpc: { host: '127.0.0.1', port: 0 },
    });
    return {
      httpUrl: service.httpUrl,
      grpcAddress: service.grpcAddress,
      async stop() {
        await service.stop();
        await bus.close();
        await cache.close();
      },
    };
  },
});
