import { loadConfig } from './config.js';

describe('policy config', () => {
  const env = { DATABASE_URL: 'postgresql://x/y', NATS_URL: 'nats://n', REDIS_URL: 'redis://r', ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123' };

  it('reads the required keys and defaults the ports and the other contexts', () => {
    expect(loadConfig(env)).toEqual({
      databaseUrl: 'postgresql://x/y',
      natsUrl: 'nats://n',
      redisUrl: 'redis://r',
      internalSecret: 'internal-secret-for-the-config-tests-0123',
      http: { host: '127.0.0.1', port: 18103 },
      grpc: { host: '127.0.0.1', port: 18203 },
      pkiEnrollmentGrpc: '127.0.0.1:18202',
      postureGrpc: '127.0.0.1:18205',
      identityAuthGrpc: '127.0.0.1:18201',
      fabricGrpc: '127.0.0.1:18206',
    });
    expect(loadConfig({ ...env, PKI_ENROLLMENT_GRPC: 'pki:1', POSTURE_GRPC: 'posture:2', IDENTITY_AUTH_GRPC: 'ia:3', FABRIC_GRPC: 'fabric:4' })).toMatchObject({
      pkiEnrollmentGrpc: 'pki:1', postureGrpc: 'posture:2', identityAuthGrpc: 'ia:3', fabricGrpc: 'fabric:4',
    });
  });

  it('fails fast naming a missing key', () => {
    expect(() => loadConfig({ ...env, DATABASE_URL: '' })).toThrow(/DATABASE_URL/);
  });
});
