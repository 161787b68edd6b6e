import { type ContextConfig, contextConfig, peerAddress } from '@ziti/service-kit';

/** Configuration of the standalone process (`main.ts`), read from the environment. */
export interface Config extends ContextConfig {
  /** POLICY_GRPC (host:port), default 127.0.0.1:18203. */
  policyGrpc: string;
  /** IDENTITY_AUTH_GRPC (host:port), default 127.0.0.1:18201. */
  identityAuthGrpc: string;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    ...contextConfig(env, 'POSTURE', { http: 18105, grpc: 18205 }),
    policyGrpc: peerAddress(env, 'POLICY_GRPC', '127.0.0.1:18203'),
    identityAuthGrpc: peerAddress(env, 'IDENTITY_AUTH_GRPC', '127.0.0.1:18201'),
  };
}
