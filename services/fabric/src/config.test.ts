import { loadConfig } from './config.js';

const required = { DATABASE_URL: 'postgresql://db/x', NATS_URL: 'nats://n:4222', REDIS_URL: 'redis://r:6379', ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123' };

describe('loadConfig', () => {
  it("publishes routers' metrics only when the event stream names metrics or usage (not by default)", () => {
    expect(loadConfig(required).routerMetricsEvents).toEqual({ metrics: false, usage: false });
    expect(loadConfig({ ...required, ZITI_EVENTS: 'none' }).routerMetricsEvents).toEqual({ metrics: false, usage: false });
    expect(loadConfig({ ...required, ZITI_EVENTS: 'router,circuit' }).routerMetricsEvents).toEqual({ metrics: false, usage: false });
    expect(loadConfig({ ...required, ZITI_EVENTS: 'router, usage' }).routerMetricsEvents).toEqual({ metrics: false, usage: true });
    expect(loadConfig({ ...required, ZITI_EVENTS: 'metrics,usage' }).routerMetricsEvents).toEqual({ metrics: true, usage: true });
  });
});
