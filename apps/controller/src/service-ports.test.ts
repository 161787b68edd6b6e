import { servicePortsFromEnv } from './service-ports.js';

describe('context ports of the all-in-one start', () => {
  it('are free ports (none given) unless configured', () => {
    expect(servicePortsFromEnv({})).toEqual({});
    expect(servicePortsFromEnv({ IDENTITY_AUTH_HTTP_PORT: '', POSTURE_GRPC_PORT: '0' })).toEqual({});
  });

  it('come from <CONTEXT>_HTTP_PORT and <CONTEXT>_GRPC_PORT, as the standalone services read them', () => {
    expect(servicePortsFromEnv({ IDENTITY_AUTH_HTTP_PORT: '18101', PKI_ENROLLMENT_GRPC_PORT: '18202', POSTURE_HTTP_PORT: '28105', POSTURE_GRPC_PORT: '28205' })).toEqual({
      'identity-auth': { http: 18101, grpc: 0 },
      'pki-enrollment': { http: 0, grpc: 18202 },
      posture: { http: 28105, grpc: 28205 },
    });
  });

  it('fail fast with the variable named when a value is not a port', () => {
    expect(() => servicePortsFromEnv({ SESSION_GRPC_PORT: 'x' })).toThrow('SESSION_GRPC_PORT');
    expect(() => servicePortsFromEnv({ POLICY_HTTP_PORT: '70000' })).toThrow('POLICY_HTTP_PORT');
  });
});
