import { type ContextConfig, contextConfig, intEnv, optionalSecret, peerAddress, requireSecret } from '@ziti/service-kit';
import { DEFAULT_MAX_API_SESSION_CERTIFICATES } from './domain/session-certs.js';

/** Configuration of the standalone process (`main.ts`), read from the environment. */
export interface Config extends ContextConfig {
  /** The secret the edge API server key is derived from (the gateway holds the same one). */
  serverKeySecret: string;
  /** identity-auth's gRPC `host:port`. */
  identityAuthGrpc: string;
  /** `host:port` of the edge API (JWT issuers); without it, the address the gateway reports. */
  advertisedAddress?: string;
  /** Key-encryption secret for the PKI's private keys; default: the internal secret. */
  pkiKey?: string;
  /** SPIFFE trust domain of issued certificates; default: the one in the root CA (generated on first start). */
  trustDomain?: string;
  /** `ctrls` claim of enrollment JWTs as given; default `tls:<ctrlAdvertisedAddress>`. */
  ctrlAddresses?: string[];
  /** `host:port` routers dial for the control plane; default the edge API's host, port 6262. */
  ctrlAdvertisedAddress?: string;
  /** Enrollment JWT lifetimes in minutes (default 180, minimum 5). */
  identityEnrollmentMinutes?: number;
  routerEnrollmentMinutes?: number;
  /** Certificates one API session may hold (default 10, 0 = no bound). */
  maxApiSessionCertificates: number;
}

/**
 * | Key | Default |
 * |---|---|
 * | `DATABASE_URL`, `NATS_URL`, `REDIS_URL`, `ZITI_INTERNAL_SECRET`, `ZITI_SERVER_KEY_SECRET` | required (secrets: at least 32 characters, no placeholder) |
 * | `ZITI_BIND_HOST` | `127.0.0.1` |
 * | `PKI_ENROLLMENT_HTTP_PORT`, `PKI_ENROLLMENT_GRPC_PORT` | `18102`, `18202` |
 * | `IDENTITY_AUTH_GRPC` | `127.0.0.1:18201` |
 * | `ZITI_CTRL_ADVERTISED_ADDRESS` | none: the address the gateway reports |
 * | `ZITI_PKI_KEY` | none: keys are sealed with a key derived from `ZITI_INTERNAL_SECRET` |
 * | `ZITI_TRUST_DOMAIN` | the root CA's (generated on first start) |
 * | `ZITI_ROUTER_CTRL_ADVERTISED_ADDRESS` | the edge API's host, port 6262 (`host:port` routers dial; `ctrls` of enrollment JWTs) |
 * | `ZITI_CTRL_ENDPOINTS` | `tls:<ZITI_ROUTER_CTRL_ADVERTISED_ADDRESS>` (comma list, used as given) |
 * | `ZITI_ENROLLMENT_DURATION_MINUTES`, `ZITI_ROUTER_ENROLLMENT_DURATION_MINUTES` | 180 |
 * | `ZITI_MAX_API_SESSION_CERTIFICATES` | 10 (0 = no bound) |
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const optionalInt = (key: string) => (env[key] ? intEnv(env, key, 180, 0, 525600) : undefined);
  const list = (env.ZITI_CTRL_ENDPOINTS ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  return {
    ...contextConfig(env, 'PKI_ENROLLMENT', { http: 18102, grpc: 18202 }),
    serverKeySecret: requireSecret(env, 'ZITI_SERVER_KEY_SECRET'),
    identityAuthGrpc: peerAddress(env, 'IDENTITY_AUTH_GRPC', '127.0.0.1:18201'),
    advertisedAddress: env.ZITI_CTRL_ADVERTISED_ADDRESS?.trim() || undefined,
    pkiKey: optionalSecret(env, 'ZITI_PKI_KEY'),
    trustDomain: env.ZITI_TRUST_DOMAIN?.trim() || undefined,
    ctrlAddresses: list.length > 0 ? list : undefined,
    ctrlAdvertisedAddress: ctrlPlaneAddress(env.ZITI_ROUTER_CTRL_ADVERTISED_ADDRESS),
    identityEnrollmentMinutes: optionalInt('ZITI_ENROLLMENT_DURATION_MINUTES'),
    routerEnrollmentMinutes: optionalInt('ZITI_ROUTER_ENROLLMENT_DURATION_MINUTES'),
    maxApiSessionCertificates: intEnv(env, 'ZITI_MAX_API_SESSION_CERTIFICATES', DEFAULT_MAX_API_SESSION_CERTIFICATES, 0, 10_000),
  };
}

/** `host:port` (a bracketed IPv6 host allowed), or undefined when unset; anything else fails the start. */
export function ctrlPlaneAddress(value: string | undefined): string | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(v);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) throw new Error(`ZITI_ROUTER_CTRL_ADVERTISED_ADDRESS must be host:port, got "${v}"`);
  return v;
}
