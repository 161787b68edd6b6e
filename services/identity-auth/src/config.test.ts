import { loadConfig } from './config.js';

const required = { DATABASE_URL: 'postgresql://db/x', NATS_URL: 'nats://n:4222', REDIS_URL: 'redis://r:6379', ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123' };

describe('loadConfig', () => {
  it('reads the environment with the documented defaults', () => {
    expect(loadConfig(required)).toEqual({
      databaseUrl: 'postgresql://db/x',
      natsUrl: 'nats://n:4222',
      redisUrl: 'redis://r:6379',
      internalSecret: 'internal-secret-for-the-config-tests-0123',
      http: { host: '127.0.0.1', port: 18101 },
      grpc: { host: '127.0.0.1', port: 18201 },
      dataDir: 'data',
      admin: { username: 'admin', password: undefined },
      maxApiSessionsPerIdentity: 100,
      outboundAllowPrivate: false,
      // The event stream's namespaces default to all of them, so logins hand back their outcome.
      authenticationEvents: true,
    });
  });

  it('hands back login outcomes only when the event stream wants authentication or apiSession records', () => {
    expect(loadConfig({ ...required, ZITI_EVENTS: 'none' }).authenticationEvents).toBe(false);
    expect(loadConfig({ ...required, ZITI_EVENTS: 'session,entityCount' }).authenticationEvents).toBe(false);
    expect(loadConfig({ ...required, ZITI_EVENTS: 'apiSession' }).authenticationEvents).toBe(true);
    expect(loadConfig({ ...required, ZITI_EVENTS: 'authentication' }).authenticationEvents).toBe(true);
  });

  it('takes the overrides', () => {
    const c = loadConfig({
      ...required,
      ZITI_BIND_HOST: '0.0.0.0',
      IDENTITY_AUTH_HTTP_PORT: '0',
      IDENTITY_AUTH_GRPC_PORT: '9000',
      ZITI_DATA_DIR: '/var/lib/ziti',
      ZITI_USER: 'root',
      ZITI_PWD: 'pa55word',
      ZITI_SESSION_TIMEOUT_MINUTES: '45',
      ZITI_MAX_API_SESSIONS_PER_IDENTITY: '0',
      PKI_ENROLLMENT_GRPC: 'pki-enrollment:18202',
      ZITI_OUTBOUND_ALLOW_PRIVATE: 'true',
      ZITI_INSTANCE_ID: ' ctrl-1 ',
    });
    expect(c).toMatchObject({
      http: { host: '0.0.0.0', port: 0 },
      grpc: { host: '0.0.0.0', port: 9000 },
      dataDir: '/var/lib/ziti',
      admin: { username: 'root', password: 'pa55word' },
      sessionTimeoutMinutes: 45,
      maxApiSessionsPerIdentity: 0,
      pkiEnrollmentGrpc: 'pki-enrollment:18202',
      outboundAllowPrivate: true,
      instanceId: 'ctrl-1',
    });
    for (const [raw, value] of [['1', true], ['ON', true], ['false', false], ['0', false], ['', false]] as const) {
      expect(loadConfig({ ...required, ZITI_OUTBOUND_ALLOW_PRIVATE: raw }).outboundAllowPrivate).toBe(value);
    }
  });

  it('fails fast naming the missing or bad key', () => {
    expect(() => loadConfig({ ...required, ZITI_INTERNAL_SECRET: '' })).toThrow(/ZITI_INTERNAL_SECRET/);
    expect(() => loadConfig({ ...required, DATABASE_URL: undefined })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ ...required, IDENTITY_AUTH_HTTP_PORT: 'x' })).toThrow(/IDENTITY_AUTH_HTTP_PORT/);
    expect(() => loadConfig({ ...required, ZITI_OUTBOUND_ALLOW_PRIVATE: 'sometimes' })).toThrow(/ZITI_OUTBOUND_ALLOW_PRIVATE/);
    expect(() => loadConfig({ ...required, ZITI_MAX_API_SESSIONS_PER_IDENTITY: 'many' })).toThrow(/ZITI_MAX_API_SESSIONS_PER_IDENTITY/);
  });
});
