import { type ContextConfig, contextConfig, eventNamespacesEnabled, intEnv, peerAddress } from '@ziti/service-kit';

/** Configuration of the standalone process (`main.ts`), read from the environment. */
export interface Config extends ContextConfig {
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
  return {
    ...contextConfig(env, 'SESSION', { http: 18104, grpc: 18204 }),
    policyGrpc: peerAddress(env, 'POLICY_GRPC', '127.0.0.1:18203'),
    postureGrpc: peerAddress(env, 'POSTURE_GRPC', '127.0.0.1:18205'),
    pkiEnrollmentGrpc: peerAddress(env, 'PKI_ENROLLMENT_GRPC', '127.0.0.1:18202'),
    poolSize: intEnv(env, 'SESSION_DB_POOL_SIZE', 10),
    postureSweepSeconds: intEnv(env, 'SESSION_POSTURE_SWEEP_SECONDS', 5, 0),
    sessionEvents: eventNamespacesEnabled(env, ['session']),
  };
}
