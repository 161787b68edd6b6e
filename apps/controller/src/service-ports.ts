import { intEnv } from '@ziti/service-kit';

/** The contexts the all-in-one controller runs, in start order. */
export const CONTEXTS = ['identity-auth', 'pki-enrollment', 'policy', 'session', 'posture', 'fabric'] as const;
export type ContextName = (typeof CONTEXTS)[number];

/**
 * Loopback ports of the contexts of one controller, by context; a context or protocol left out (or
 * 0) listens on a free port chosen by the system.
 */
export type ServicePorts = Partial<Record<ContextName, { http?: number; grpc?: number }>>;

/**
 * The ports configured in the environment with the variables the standalone services read,
 * `<CONTEXT>_HTTP_PORT` and `<CONTEXT>_GRPC_PORT` (`IDENTITY_AUTH_HTTP_PORT`, `POSTURE_GRPC_PORT`,
 * …). Unlike a standalone service, which defaults to 1810x / 1820x, an unset variable here means a
 * free port, so that several controllers run on one host.
 */
export function servicePortsFromEnv(env: NodeJS.ProcessEnv): ServicePorts {
  const ports: ServicePorts = {};
  for (const name of CONTEXTS) {
    const prefix = name.toUpperCase().replace('-', '_');
    const http = intEnv(env, `${prefix}_HTTP_PORT`, 0);
    const grpc = intEnv(env, `${prefix}_GRPC_PORT`, 0);
    if (http || grpc) ports[name] = { http, grpc };
  }
  return ports;
}
