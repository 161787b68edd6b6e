import { resolve } from 'node:path';
import { loadConfig, loadEventStreamConfig } from './config.js';

describe('loadConfig', () => {
  it('applies the defaults', () => {
    expect(loadConfig({ ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123', ZITI_SERVER_KEY_SECRET: 'server-key-secret-for-config-tests-0123' })).toEqual({
      listen: { host: '0.0.0.0', port: 1280 },
      advertisedAddress: undefined,
      extraSans: [],
      dataDir: resolve('data'),
      internalSecret: 'internal-secret-for-the-config-tests-0123',
      serverKeySecret: 'server-key-secret-for-config-tests-0123',
      natsUrl: undefined,
      redisUrl: undefined,
      upstreams: {
        'identity-auth': 'https://127.0.0.1:18101',
        'pki-enrollment': 'https://127.0.0.1:18102',
        policy: 'https://127.0.0.1:18103',
        session: 'https://127.0.0.1:18104',
        posture: 'https://127.0.0.1:18105',
        fabric: 'https://127.0.0.1:18106',
      },
      identityAuthGrpc: '127.0.0.1:18201',
      contextGrpc: {
        'identity-auth': '127.0.0.1:18201',
        'pki-enrollment': '127.0.0.1:18202',
        policy: '127.0.0.1:18203',
        session: '127.0.0.1:18204',
        posture: '127.0.0.1:18205',
        fabric: '127.0.0.1:18206',
      },
      pkiEnrollmentGrpc: '127.0.0.1:18202',
      instanceId: undefined,
      revision: 'local',
      trustedProxies: [],
      trustedProxyHeader: 'x-forwarded-for',
      authRateLimiter: { enabled: true, minSize: 5, maxSize: 250 },
      loginFailureLimits: { perUsername: 10, perAddress: 30, windowSeconds: 60 },
      events: { namespaces: ['entityChange', 'apiSession', 'session', 'authentication', 'entityCount', 'router', 'circuit', 'link'], file: undefined, entityCountIntervalMs: 300_000 },
    });
  });

  it('reads the guards', () => {
    expect(
      loadConfig({
        ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123', ZITI_SERVER_KEY_SECRET: 'server-key-secret-for-config-tests-0123', ZITI_TRUSTED_PROXIES: '10.0.0.0/8, fd00::/8,192.0.2.7', ZITI_TRUSTED_PROXY_HEADER: 'Forwarded',
        ZITI_AUTH_RATE_LIMITER: 'off', ZITI_AUTH_RATE_LIMITER_MIN_SIZE: '10', ZITI_AUTH_RATE_LIMITER_MAX_SIZE: '1000',
        ZITI_LOGIN_FAILURES_PER_USERNAME: '0', ZITI_LOGIN_FAILURES_PER_ADDRESS: '100', ZITI_LOGIN_FAILURE_WINDOW_SECONDS: '30',
      }),
    ).toMatchObject({
      trustedProxies: ['10.0.0.0/8', 'fd00::/8', '192.0.2.7'],
      trustedProxyHeader: 'forwarded',
      authRateLimiter: { enabled: false, minSize: 10, maxSize: 1000 },
      loginFailureLimits: { perUsername: 0, perAddress: 100, windowSeconds: 30 },
    });
  });

  it('reads every key', () => {
    const c = loadConfig({
      ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123', ZITI_SERVER_KEY_SECRET: 'server-key-secret-for-config-tests-0123', ZITI_CTRL_ADVERTISED_ADDRESS: 'ctrl.example.com:443', ZITI_CTRL_LISTEN_HOST: '127.0.0.1',
      ZITI_CTRL_PORT: '8443', ZITI_CTRL_SANS: 'a.example, 10.0.0.1 ,', ZITI_DATA_DIR: '/var/lib/ziti', NATS_URL: 'nats://n:4222',
      REDIS_URL: 'redis://r:6379', IDENTITY_AUTH_URL: 'https://ia:8080/', IDENTITY_AUTH_GRPC: 'ia:9090', POLICY_URL: 'https://p:1', PKI_ENROLLMENT_GRPC: 'pki:9091',
      ZITI_INSTANCE_ID: 'gw-1', ZITI_REVISION: 'abc123',
    });
    expect(c).toMatchObject({
      listen: { host: '127.0.0.1', port: 8443 }, advertisedAddress: 'ctrl.example.com:443', extraSans: ['a.example', '10.0.0.1'],
      dataDir: '/var/lib/ziti', natsUrl: 'nats://n:4222', redisUrl: 'redis://r:6379', identityAuthGrpc: 'ia:9090', pkiEnrollmentGrpc: 'pki:9091',
      instanceId: 'gw-1', revision: 'abc123',
    });
    expect(c.upstreams['identity-auth']).toBe('https://ia:8080');
    expect(c.upstreams.policy).toBe('https://p:1');
  });

  it.each([
    [{}, 'ZITI_INTERNAL_SECRET'],
    [{ ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123', ZITI_SERVER_KEY_SECRET: 'server-key-secret-for-config-tests-0123', ZITI_CTRL_PORT: 'http' }, 'ZITI_CTRL_PORT'],
    [{ ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123', ZITI_SERVER_KEY_SECRET: 'server-key-secret-for-config-tests-0123', ZITI_CTRL_PORT: '70000' }, 'ZITI_CTRL_PORT'],
    [{ ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123', ZITI_SERVER_KEY_SECRET: 'server-key-secret-for-config-tests-0123', IDENTITY_AUTH_GRPC: 'nohost' }, 'IDENTITY_AUTH_GRPC'],
    [{ ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123', ZITI_SERVER_KEY_SECRET: 'server-key-secret-for-config-tests-0123', PKI_ENROLLMENT_GRPC: 'nohost' }, 'PKI_ENROLLMENT_GRPC'],
    [{ ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123', ZITI_SERVER_KEY_SECRET: 'server-key-secret-for-config-tests-0123', POLICY_URL: 'not a url' }, 'POLICY_URL'],
    [{ ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123', ZITI_SERVER_KEY_SECRET: 'server-key-secret-for-config-tests-0123', POLICY_URL: 'http://policy:18103' }, 'POLICY_URL'],
    [{ ZITI_INTERNAL_SECRET: 'change-me', ZITI_SERVER_KEY_SECRET: 'server-key-secret-for-config-tests-0123' }, 'ZITI_INTERNAL_SECRET'],
    [{ ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123' }, 'ZITI_SERVER_KEY_SECRET'],
    [{ ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123', ZITI_SERVER_KEY_SECRET: 'server-key-secret-for-config-tests-0123', ZITI_CTRL_ADVERTISED_ADDRESS: 'https://x/' }, 'ZITI_CTRL_ADVERTISED_ADDRESS'],
    [{ ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123', ZITI_SERVER_KEY_SECRET: 'server-key-secret-for-config-tests-0123', ZITI_TRUSTED_PROXIES: '10.0.0.0/8,proxy.local' }, 'ZITI_TRUSTED_PROXIES'],
    [{ ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123', ZITI_SERVER_KEY_SECRET: 'server-key-secret-for-config-tests-0123', ZITI_TRUSTED_PROXY_HEADER: 'x-real-ip' }, 'ZITI_TRUSTED_PROXY_HEADER'],
    [{ ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123', ZITI_SERVER_KEY_SECRET: 'server-key-secret-for-config-tests-0123', ZITI_AUTH_RATE_LIMITER: 'maybe' }, 'ZITI_AUTH_RATE_LIMITER'],
    [{ ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123', ZITI_SERVER_KEY_SECRET: 'server-key-secret-for-config-tests-0123', ZITI_AUTH_RATE_LIMITER_MIN_SIZE: '4' }, 'ZITI_AUTH_RATE_LIMITER_MIN_SIZE'],
    [{ ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123', ZITI_SERVER_KEY_SECRET: 'server-key-secret-for-config-tests-0123', ZITI_AUTH_RATE_LIMITER_MIN_SIZE: '300' }, 'ZITI_AUTH_RATE_LIMITER_MAX_SIZE'],
    [{ ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123', ZITI_SERVER_KEY_SECRET: 'server-key-secret-for-config-tests-0123', ZITI_LOGIN_FAILURES_PER_USERNAME: '-1' }, 'ZITI_LOGIN_FAILURES_PER_USERNAME'],
    [{ ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123', ZITI_SERVER_KEY_SECRET: 'server-key-secret-for-config-tests-0123', ZITI_LOGIN_FAILURES_PER_ADDRESS: 'many' }, 'ZITI_LOGIN_FAILURES_PER_ADDRESS'],
    [{ ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123', ZITI_SERVER_KEY_SECRET: 'server-key-secret-for-config-tests-0123', ZITI_LOGIN_FAILURE_WINDOW_SECONDS: '0' }, 'ZITI_LOGIN_FAILURE_WINDOW_SECONDS'],
  ])('fails fast naming the key (%j)', (env, key) => {
    expect(() => loadConfig(env)).toThrow(key);
  });
});

describe('loadEventStreamConfig', () => {
  it('reads the namespaces, the file and the interval', () => {
    expect(loadEventStreamConfig({ ZITI_EVENTS: ' session , entityCount', ZITI_EVENTS_FILE: 'events.jsonl', ZITI_EVENTS_ENTITY_COUNT_INTERVAL: '30s' })).toEqual({
      namespaces: ['session', 'entityCount'],
      file: resolve('events.jsonl'),
      entityCountIntervalMs: 30_000,
    });
    expect(loadEventStreamConfig({ ZITI_EVENTS_ENTITY_COUNT_INTERVAL: '1.5h' })?.entityCountIntervalMs).toBe(5_400_000);
  });

  it("knows the router control plane's namespaces, router and circuit", () => {
    expect(loadEventStreamConfig({ ZITI_EVENTS: 'router,circuit' })?.namespaces).toEqual(['router', 'circuit']);
  });

  it("leaves the routers' metrics and usage out unless named", () => {
    const all = loadEventStreamConfig({})?.namespaces;
    expect(all).toEqual(['entityChange', 'apiSession', 'session', 'authentication', 'entityCount', 'router', 'circuit', 'link']);
    expect(loadEventStreamConfig({ ZITI_EVENTS: 'metrics,usage' })?.namespaces).toEqual(['metrics', 'usage']);
  });

  it('none: no stream', () => {
    expect(loadEventStreamConfig({ ZITI_EVENTS: 'none' })).toBeUndefined();
  });

  it.each([
    [{ ZITI_EVENTS: 'entityChange,bogus' }, 'ZITI_EVENTS'],
    [{ ZITI_EVENTS: 'fabric.circuits' }, 'ZITI_EVENTS'],
    [{ ZITI_EVENTS_ENTITY_COUNT_INTERVAL: '500ms' }, 'ZITI_EVENTS_ENTITY_COUNT_INTERVAL'],
    [{ ZITI_EVENTS_ENTITY_COUNT_INTERVAL: '5 minutes' }, 'ZITI_EVENTS_ENTITY_COUNT_INTERVAL'],
  ])('fails fast naming the key (%j)', (env, key) => {
    expect(() => loadEventStreamConfig(env)).toThrow(key);
  });
});
