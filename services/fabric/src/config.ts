import { hostname } from 'node:os';
import { type ContextConfig, contextConfig, eventNamespacesEnabled, peerAddress } from '@ziti/service-kit';

/** Where the router control listener binds and what routers are told to dial. */
export interface CtrlListenConfig {
  /** ZITI_ROUTER_CTRL_LISTEN `host:port` (default 0.0.0.0:6262, OpenZiti's default control port; port 0 = a free one). */
  host: string;
  port: number;
  /**
   * ZITI_ROUTER_CTRL_ADVERTISED_ADDRESS `host:port` routers dial (the listener certificate's name; the
   * `ctrls` claim of router enrollment JWTs comes from pki-enrollment's own setting). Default the
   * machine's host name and the listener's port.
   */
  advertisedAddress?: string;
}

/** Configuration of the standalone process (`main.ts`), read from the environment. */
export interface Config extends ContextConfig {
  /** POLICY_GRPC, IDENTITY_AUTH_GRPC, PKI_ENROLLMENT_GRPC, SESSION_GRPC (host:port). */
  policyGrpc: string;
  identityAuthGrpc: string;
  pkiEnrollmentGrpc: string;
  sessionGrpc: string;
  ctrl: CtrlListenConfig;
  /** ZITI_INSTANCE_ID, else the host name: the controller id routers see (set the same on every replica). */
  replica: string;
  /** ZITI_FABRIC_RELAY_ADDRESS `host:port`: where other replicas reach this one's gRPC (default its gRPC listener). */
  relayAddress?: string;
  /** Routers' metrics become `router.metrics` events while `ZITI_EVENTS` names `metrics` or `usage` (not by default). */
  routerMetricsEvents: { metrics: boolean; usage: boolean };
}

/** `host:port` (IPv6 hosts in brackets); throws a configuration error naming the key otherwise. */
export function parseHostPort(value: string, key: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:\s]+)):(\d{1,5})$/.exec(value.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new Error(`configuration: ${key} must be host:port, got "${value}"`);
  return { host: m[1] ?? m[2], port };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const listen = parseHostPort(env.ZITI_ROUTER_CTRL_LISTEN?.trim() || '0.0.0.0:6262', 'ZITI_ROUTER_CTRL_LISTEN');
  const advertised = env.ZITI_ROUTER_CTRL_ADVERTISED_ADDRESS?.trim();
  if (advertised) parseHostPort(advertised, 'ZITI_ROUTER_CTRL_ADVERTISED_ADDRESS');
  return {
    ...contextConfig(env, 'FABRIC', { http: 18106, grpc: 18206 }),
    policyGrpc: peerAddress(env, 'POLICY_GRPC', '127.0.0.1:18203'),
    identityAuthGrpc: peerAddress(env, 'IDENTITY_AUTH_GRPC', '127.0.0.1:18201'),
    pkiEnrollmentGrpc: peerAddress(env, 'PKI_ENROLLMENT_GRPC', '127.0.0.1:18202'),
    sessionGrpc: peerAddress(env, 'SESSION_GRPC', '127.0.0.1:18204'),
    ctrl: { ...listen, advertisedAddress: advertised || undefined },
    replica: env.ZITI_INSTANCE_ID?.trim() || hostname(),
    relayAddress: relayAddressOf(env),
    routerMetricsEvents: { metrics: eventNamespacesEnabled(env, ['metrics'], false), usage: eventNamespacesEnabled(env, ['usage'], false) },
  };
}

function relayAddressOf(env: NodeJS.ProcessEnv): string | undefined {
  const v = env.ZITI_FABRIC_RELAY_ADDRESS?.trim();
  if (!v) return undefined;
  parseHostPort(v, 'ZITI_FABRIC_RELAY_ADDRESS');
  return v;
}
