import { type ContextConfig, contextConfig, peerAddress } from '@ziti/service-kit';

/** Configuration of the standalone process (`main.ts`), read from the environment. */
export interface Config extends ContextConfig {
  /** pki-enrollment's gRPC address (router enrollment, session token key), `PKI_ENROLLMENT_GRPC`. */
  pkiEnrollmentGrpc: string;
  /** posture's gRPC address (postureQueries of the client service list), `POSTURE_GRPC`. */
  postureGrpc: string;
  /** identity-auth's gRPC address (identities of tunneler-enabled edge routers; the identityDetail of identity association lists), `IDENTITY_AUTH_GRPC`. */
  identityAuthGrpc: string;
  /** fabric's gRPC address (routers' live state, disconnects), `FABRIC_GRPC`. */
  fabricGrpc: string;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    ...contextConfig(env, 'POLICY', { http: 18103, grpc: 18203 }),
    pkiEnrollmentGrpc: peerAddress(env, 'PKI_ENROLLMENT_GRPC', '127.0.0.1:18202'),
    postureGrpc: peerAddress(env, 'POSTURE_GRPC', '127.0.0.1:18205'),
    identityAuthGrpc: peerAddress(env, 'IDENTITY_AUTH_GRPC', '127.0.0.1:18201'),
    fabricGrpc: peerAddress(env, 'FABRIC_GRPC', '127.0.0.1:18206'),
  };
}
