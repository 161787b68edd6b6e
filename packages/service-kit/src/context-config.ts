import { intEnv, requireEnv, requireSecret } from './process.js';

/** What every context's standalone process reads the same way (`loadConfig` spreads it). */
export interface ContextConfig {
  databaseUrl: string;
  natsUrl: string;
  redisUrl: string;
  /** Verifies the principal the gateway signs (`ZITI_INTERNAL_SECRET`, at least 32 characters, no placeholder). */
  internalSecret: string;
  http: { host: string; port: number };
  grpc: { host: string; port: number };
}

/**
 * The common part of a context's configuration: `DATABASE_URL`, `NATS_URL`, `REDIS_URL`,
 * `ZITI_INTERNAL_SECRET`, `ZITI_BIND_HOST` (default 127.0.0.1) and `<PREFIX>_HTTP_PORT` /
 * `<PREFIX>_GRPC_PORT` (e.g. `POLICY_HTTP_PORT`) with the context's default ports.
 */
export function contextConfig(env: NodeJS.ProcessEnv, prefix: string, ports: { http: number; grpc: number }): ContextConfig {
  const host = env.ZITI_BIND_HOST || '127.0.0.1';
  return {
    databaseUrl: requireEnv(env, 'DATABASE_URL'),
    natsUrl: requireEnv(env, 'NATS_URL'),
    redisUrl: requireEnv(env, 'REDIS_URL'),
    internalSecret: requireSecret(env, 'ZITI_INTERNAL_SECRET'),
    http: { host, port: intEnv(env, `${prefix}_HTTP_PORT`, ports.http) },
    grpc: { host, port: intEnv(env, `${prefix}_GRPC_PORT`, ports.grpc) },
  };
}

/** A peer context's gRPC `host:port` from `key` (e.g. `POLICY_GRPC`), else `fallback`. */
export function peerAddress(env: NodeJS.ProcessEnv, key: string, fallback: string): string {
  return env[key]?.trim() || fallback;
}
