import { eventNamespacesEnabled, intEnv, requireEnv } from '@ziti/service-kit';

/** Configuration of the standalone process (`main.ts`), read from the environment. */
export interface Config {
  databaseUrl: string;
  natsUrl: string;
  redisUrl: string;
  internalSecret: string;
  http: { host: string; port: number };
  grpc: { host: string; port: number };
  /** POLICY_GRPC, POSTURE_GRPC, PKI_ENROLLMENT_GRPC (host:port; defaults 127.0.0.1:18203, :18205, :18202). */
  policyGrpc: string;
  postureGrpc: string;
  pkiEnrollmentGrpc: string;
  /** SESSION_DB_POOL_SIZE (default 10). */
  poolSize: number;
  /** SESSION_POSTURE_SWEEP_SECONDS (default 5; 0 = off): re-check of sessions created under posture checks. */
  postureSweepSeconds: number;
  /** Session creates and deletes publish `session.*` for the gateway's event stream (`ZITI_EVENTS` names `session`; default yes). */
  sessionEvents: boolean;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const host = env.ZITI_BIND_HOST || '127.0.0.1';
  return {
    databaseUrl: requireEnv(env, 'DATABASE_URL'),
    natsUrl: requireEnv(env, 'NATS_URL'),
    redisUrl: requireEnv(env, 'REDIS_URL'),
    internalSecret: requireEnv(env, 'ZITI_INTERNAL_SECRET'),
    http: { host, port: intEnv(env, 'SESSION_HTTP_PORT', 18104) },
    grpc: { host, port: intEnv(env, 'SESSION_GRPC_PORT', 18204) },
    policyGrpc: env.POLICY_GRPC || '127.0.0.1:18203',
    postureGrpc: env.POSTURE_GRPC || '127.0.0.1:18205',
    pkiEnrollmentGrpc: env.PKI_ENROLLMENT_GRPC || '127.0.0.1:18202',
    poolSize: intEnv(env, 'SESSION_DB_POOL_SIZE', 10),
    postureSweepSeconds: intEnv(env, 'SESSION_POSTURE_SWEEP_SECONDS', 5, 0),
    sessionEvents: eventNamespacesEnabled(env, ['session']),
  };
}
