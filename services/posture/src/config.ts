import { intEnv, requireEnv } from '@ziti/service-kit';

/** Configuration of the standalone process (`main.ts`), read from the environment. */
export interface Config {
  databaseUrl: string;
  natsUrl: string;
  redisUrl: string;
  internalSecret: string;
  http: { host: string; port: number };
  grpc: { host: string; port: number };
  /** POLICY_GRPC (host:port), default 127.0.0.1:18203. */
  policyGrpc: string;
  /** IDENTITY_AUTH_GRPC (host:port), default 127.0.0.1:18201. */
  identityAuthGrpc: string;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const host = env.ZITI_BIND_HOST || '127.0.0.1';
  return {
    databaseUrl: requireEnv(env, 'DATABASE_URL'),
    natsUrl: requireEnv(env, 'NATS_URL'),
    redisUrl: requireEnv(env, 'REDIS_URL'),
    internalSecret: requireEnv(env, 'ZITI_INTERNAL_SECRET'),
    http: { host, port: intEnv(env, 'POSTURE_HTTP_PORT', 18105) },
    grpc: { host, port: intEnv(env, 'POSTURE_GRPC_PORT', 18205) },
    policyGrpc: env.POLICY_GRPC || '127.0.0.1:18203',
    identityAuthGrpc: env.IDENTITY_AUTH_GRPC || '127.0.0.1:18201',
  };
}
