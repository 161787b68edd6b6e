import { loadConfig } from './config.js';
import { ctrlEndpoints } from './domain/jwts.js';

const required = { DATABASE_URL: 'postgres://x/y', NATS_URL: 'nats://n', REDIS_URL: 'redis://r', ZITI_INTERNAL_SECRET: 'internal-secret-for-the-config-tests-0123', ZITI_SERVER_KEY_SECRET: 'server-key-secret-for-config-tests-0123' };

describe('loadConfig', () => {
  it('applies the defaults', () => {
    expect(loadConfig(required)).toEqual({
      databaseUrl: 'postgres://x/y', natsUrl: 'nats://n', redisUrl: 'redis://r', internalSecret: 'internal-secret-for-the-config-tests-0123', serverKeySecret: 'server-key-secret-for-config-tests-0123',
      http: { host: '127.0.0.1', port: 18102 }, grpc: { host: '127.0.0.1', port: 18202 }, identityAuthGrpc: '127.0.0.1:18201',
      advertisedAddress: undefined, pkiKey: undefined, trustDomain: undefined, ctrlAddresses: undefined, ctrlAdvertisedAddress: undefined,
      identityEnrollmentMinutes: undefined, routerEnrollmentMinutes: undefined, maxApiSessionCertificates: 10,
    });
  });

  it('reads every key', () => {
    expect(
      loadConfig({
        ...required, ZITI_CTRL_ADVERTISED_ADDRESS: 'ctrl.example:443', ZITI_PKI_KEY: 'pki-key-of-the-config-tests-0123456789', ZITI_TRUST_DOMAIN: 'example.org',
        ZITI_CTRL_ENDPOINTS: 'tls:a:6262, tls:b:6262', ZITI_ENROLLMENT_DURATION_MINUTES: '60', ZITI_ROUTER_ENROLLMENT_DURATION_MINUTES: '30',
        IDENTITY_AUTH_GRPC: 'ia:18201', ZITI_MAX_API_SESSION_CERTIFICATES: '3', ZITI_ROUTER_CTRL_ADVERTISED_ADDRESS: 'ctrl.example:6262',
      }),
    ).toMatchObject({
      advertisedAddress: 'ctrl.example:443', pkiKey: 'pki-key-of-the-config-tests-0123456789', trustDomain: 'example.org', ctrlAddresses: ['tls:a:6262', 'tls:b:6262'],
      identityEnrollmentMinutes: 60, routerEnrollmentMinutes: 30, identityAuthGrpc: 'ia:18201', maxApiSessionCertificates: 3, ctrlAdvertisedAddress: 'ctrl.example:6262',
    });
  });

  it('fails fast naming a missing key', () => {
    expect(() => loadConfig({ ...required, ZITI_INTERNAL_SECRET: '' })).toThrow(/ZITI_INTERNAL_SECRET/);
    expect(() => loadConfig({ ...required, ZITI_ENROLLMENT_DURATION_MINUTES: 'soon' })).toThrow(/ZITI_ENROLLMENT_DURATION_MINUTES/);
    expect(() => loadConfig({ ...required, ZITI_MAX_API_SESSION_CERTIFICATES: '-1' })).toThrow(/ZITI_MAX_API_SESSION_CERTIFICATES/);
    for (const bad of ['ctrl.example', 'tls:ctrl.example:6262', 'ctrl.example:0', 'ctrl.example:70000', '::1:6262']) {
      expect(() => loadConfig({ ...required, ZITI_ROUTER_CTRL_ADVERTISED_ADDRESS: bad })).toThrow(/ZITI_ROUTER_CTRL_ADVERTISED_ADDRESS/);
    }
    expect(loadConfig({ ...required, ZITI_ROUTER_CTRL_ADVERTISED_ADDRESS: '[::1]:6262' }).ctrlAdvertisedAddress).toBe('[::1]:6262');
  });
});

describe('ctrlEndpoints (the `ctrls` claim of enrollment JWTs)', () => {
  it('takes the endpoints given, else the control address, else the edge host on port 6262', () => {
    expect(ctrlEndpoints('edge.example:1280', { ctrlAddresses: ['tls:a:1', 'tls:b:2'], ctrlAdvertisedAddress: 'c:3' })).toEqual(['tls:a:1', 'tls:b:2']);
    expect(ctrlEndpoints('edge.example:1280', { ctrlAdvertisedAddress: 'ctrl.example:7000' })).toEqual(['tls:ctrl.example:7000']);
    expect(ctrlEndpoints('edge.example:1280', {})).toEqual(['tls:edge.example:6262']);
    expect(ctrlEndpoints('edge.example', {})).toEqual(['tls:edge.example:6262']);
    expect(ctrlEndpoints('edge.example', { ctrlAdvertisedAddress: undefined })).toEqual(['tls:edge.example:6262']);
    expect(ctrlEndpoints('[2001:db8::1]:1280', {})).toEqual(['tls:[2001:db8::1]:6262']);
    expect(ctrlEndpoints('2001:db8::1', {})).toEqual(['tls:[2001:db8::1]:6262']);
  });
});
