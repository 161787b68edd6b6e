import { intEnv, requireEnv } from '@ziti/service-kit';

/** Configuration of the standalone process (`main.ts`), read from the environment. */
export interface Config {
  databaseUrl: string;
  natsUrl: string;
  redisUrl: string;
  internalSecret: string;
  http: { host: string; port: number };
  grpc: { host: string; port: number };
  /** pki-enrollment's gRPC address (router enrollment, session token key), `PKI_ENROLLMENT_GRPC`. */
  pkiEnrollmentGrpc: string;
  /** posture's gRPC address (postureQueries of the client service list), `POSTURE_GRPC`. */
  postureGrpc: string;
  /** identity-auth's gRPC address (identities of tunneler-enabled edge routers; the identityDetail of identity association lists), `IDENTITY_AUTH_GRPC`. */
  identityAuthGrpc: string;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const host = env.ZITI_BIND_HOST || '127.0.0.1';
  return {
    databaseUrl: requireEnv(env, 'DATABASE_URL'),
    natsUrl: requireEnv(env, 'NATS_URL'),
    redisUrl: requireEnv(env, 'REDIS_URL'),
    internalSecret: requireEnv(env, 'ZITI_INTERNAL_SECRET'),
    http: { host, port: intEnv(env, 'POLICY_HTTP_PORT', 18103) },
    grpc: { host, port: intEnv(env, 'POLICY_GRPC_PORT', 18203) },
    pkiEnrollmentGrpc: env.PKI_ENROLLMENT_GRPC?.trim() || '127.0.0.1:18202',
    postureGrpc: env.POSTURE_GRPC?.trim() || '127.0.0.1:18205',
    identityAuthGrpc: env.IDENTITY_AUTH_GRPC?.trim() || '127.0.0.1:18201',
  };
}
