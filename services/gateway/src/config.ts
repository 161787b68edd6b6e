import { resolve } from 'node:path';
import { boolEnv, intEnv, requireSecret } from '@ziti/service-kit';
import type { EventStreamConfig } from './events/event-stream.js';
import { DEFAULT_NAMESPACES, NAMESPACES, type Namespace } from './events/openziti-records.js';
import { AddressSet, type ForwardedHeader } from './http/client-address.js';
import { AUTH_RATE_LIMITER_BOUNDS, AUTH_RATE_LIMITER_DEFAULTS, type AuthRateLimiterOptions } from './limits/adaptive-limiter.js';
import { LOGIN_LIMIT_DEFAULTS, type LoginLimitOptions } from './limits/login-failures.js';
import type { UpstreamOwner } from './service.js';

/** The gateway's guards, from the environment, with the names `GatewayDeps` takes them under. */
export interface GatewayGuardConfig {
  /** Proxies whose forwarded headers are believed (`ZITI_TRUSTED_PROXIES`). */
  trustedProxies: string[];
  /** The header they report the client in (`ZITI_TRUSTED_PROXY_HEADER`). */
  trustedProxyHeader: ForwardedHeader;
  /** OpenZiti's adaptive auth rate limiter, per process. */
  authRateLimiter: Required<AuthRateLimiterOptions>;
  /** Failed-login limits shared through the cache (0: off). */
  loginFailureLimits: Required<LoginLimitOptions>;
}

/** The gateway's standalone configuration, from the environment. */
export interface GatewayConfig extends GatewayGuardConfig {
  listen: { host: string; port: number };
  /** `host:port` clients use (apiBaseUrls, protocols, certificate SAN); default from the listener. */
  advertisedAddress?: string;
  /** Extra names and addresses for the server certificate (`ZITI_CTRL_SANS`). */
  extraSans: string[];
  dataDir: string;
  internalSecret: string;
  /** The secret the edge API's server key is derived from (`ZITI_SERVER_KEY_SECRET`; pki-enrollment holds the same one). */
  serverKeySecret: string;
  natsUrl?: string;
  redisUrl?: string;
  upstreams: Record<UpstreamOwner, string>;
  identityAuthGrpc: string;
  /** pki-enrollment's gRPC address: the TLS credentials come from the controller PKI there. */
  pkiEnrollmentGrpc: string;
  /** Every context's gRPC address (fan-out operations: `/summary`, `/database/*`). */
  contextGrpc: Record<UpstreamOwner, string>;
  /** Where `POST /database/snapshot` writes (`ZITI_SNAPSHOT_DIR`); default `<dataDir>/snapshots`. */
  snapshotDir?: string;
  instanceId?: string;
  revision: string;
  /** A ZAC build served at `/zac/` (`ZITI_ZAC_DIR`); none by default. */
  consoleDir?: string;
  /** The OpenZiti-format event stream; undefined when `ZITI_EVENTS=none`. */
  events?: EventStreamConfig;
}

/** A context's URL: `https:` only (the contexts listen with mutual TLS). */
function httpsUrl(env: NodeJS.ProcessEnv, key: string, fallback: string): string {
  const value = url(env, key, fallback)!;
  if (!value.startsWith('https://')) throw new Error(`${key} must be an https:// URL (the contexts answer only over mutual TLS), got "${value}"`);
  return value;
}

function url(env: NodeJS.ProcessEnv, key: string, fallback?: string): string | undefined {
  const raw = env[key]?.trim() || fallback;
  if (raw === undefined) return undefined;
  try {
    new URL(raw);
  } catch {
    throw new Error(`${key} must be a URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

function hostPort(env: NodeJS.ProcessEnv, key: string, fallback: string): string {
  const raw = env[key]?.trim() || fallback;
  if (!/^(\[[0-9a-fA-F:.]+\]|[^\s:/]+):\d{1,5}$/.test(raw)) throw new Error(`${key} must be host:port, got "${raw}"`);
  return raw;
}

/**
 * Reads the guards' settings (part of {@link loadConfig}; the all-in-one controller can read them
 * the same way), failing fast with the name of the offending key.
 *
 * | Key | Default |
 * |---|---|
 * | `ZITI_TRUSTED_PROXIES` | none (comma list of addresses and CIDRs whose forwarded headers are believed) |
 * | `ZITI_TRUSTED_PROXY_HEADER` | `x-forwarded-for` (or `forwarded`, RFC 7239) |
 * | `ZITI_AUTH_RATE_LIMITER` | `on` |
 * | `ZITI_AUTH_RATE_LIMITER_MIN_SIZE`, `ZITI_AUTH_RATE_LIMITER_MAX_SIZE` | `5`, `250` (each 5..1000) |
 * | `ZITI_LOGIN_FAILURES_PER_USERNAME` | `10` (0: off) |
 * | `ZITI_LOGIN_FAILURES_PER_ADDRESS` | `30` (0: off) |
 * | `ZITI_LOGIN_FAILURE_WINDOW_SECONDS` | `60` (1..3600) |
 */
export function loadGuardConfig(env: NodeJS.ProcessEnv): GatewayGuardConfig {
  const trustedProxies = (env.ZITI_TRUSTED_PROXIES ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  try {
    new AddressSet(trustedProxies);
  } catch (err) {
    throw new Error(`ZITI_TRUSTED_PROXIES: ${(err as Error).message}`);
  }
  const header = env.ZITI_TRUSTED_PROXY_HEADER?.trim().toLowerCase() || 'x-forwarded-for';
  if (header !== 'x-forwarded-for' && header !== 'forwarded') {
    throw new Error(`ZITI_TRUSTED_PROXY_HEADER must be x-forwarded-for or forwarded, got "${env.ZITI_TRUSTED_PROXY_HEADER}"`);
  }
  const { min, max } = AUTH_RATE_LIMITER_BOUNDS;
  const minSize = intEnv(env, 'ZITI_AUTH_RATE_LIMITER_MIN_SIZE', AUTH_RATE_LIMITER_DEFAULTS.minSize, min, max);
  const maxSize = intEnv(env, 'ZITI_AUTH_RATE_LIMITER_MAX_SIZE', AUTH_RATE_LIMITER_DEFAULTS.maxSize, min, max);
  if (minSize > maxSize) throw new Error(`ZITI_AUTH_RATE_LIMITER_MIN_SIZE (${minSize}) must not exceed ZITI_AUTH_RATE_LIMITER_MAX_SIZE (${maxSize})`);
  return {
    trustedProxies,
    trustedProxyHeader: header,
    authRateLimiter: { enabled: boolEnv(env, 'ZITI_AUTH_RATE_LIMITER', AUTH_RATE_LIMITER_DEFAULTS.enabled), minSize, maxSize },
    loginFailureLimits: {
      perUsername: intEnv(env, 'ZITI_LOGIN_FAILURES_PER_USERNAME', LOGIN_LIMIT_DEFAULTS.perUsername, 0, 1_000_000),
      perAddress: intEnv(env, 'ZITI_LOGIN_FAILURES_PER_ADDRESS', LOGIN_LIMIT_DEFAULTS.perAddress, 0, 1_000_000),
      windowSeconds: intEnv(env, 'ZITI_LOGIN_FAILURE_WINDOW_SECONDS', LOGIN_LIMIT_DEFAULTS.windowSeconds, 1, 3600),
    },
  };
}

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Reads the OpenZiti-format event stream's settings (part of {@link loadConfig}; the all-in-one
 * controller reads them the same way), failing fast with the offending key's name.
 *
 * | Key | Default |
 * |---|---|
 * | `ZITI_EVENTS` | `entityChange,apiSession,session,authentication,entityCount,router,circuit,link` (comma list of these and `metrics`, `usage`; `none`: no stream) |
 * | `ZITI_EVENTS_FILE` | none (a JSON-lines file the records are appended to) |
 * | `ZITI_EVENTS_ENTITY_COUNT_INTERVAL` | `5m` (a number with `ms`, `s`, `m` or `h`; at least 1 s) |
 */
export function loadEventStreamConfig(env: NodeJS.ProcessEnv): EventStreamConfig | undefined {
  const raw = env.ZITI_EVENTS?.trim() || DEFAULT_NAMESPACES.join(',');
  if (raw.toLowerCase() === 'none') return undefined;
  const namespaces = new Set<Namespace>();
  for (const name of raw.split(',').map((s) => s.trim()).filter((s) => s.length > 0)) {
    if (!(NAMESPACES as readonly string[]).includes(name)) {
      throw new Error(`ZITI_EVENTS: unknown namespace "${name}" (known: ${NAMESPACES.join(', ')}, or none)`);
    }
    namespaces.add(name as Namespace);
  }
  const interval = env.ZITI_EVENTS_ENTITY_COUNT_INTERVAL?.trim() || '5m';
  const m = DURATION.exec(interval);
  const intervalMs = m ? Math.round(Number(m[1]) * UNIT_MS[m[2]!]!) : NaN;
  if (!(intervalMs >= 1000)) {
    throw new Error(`ZITI_EVENTS_ENTITY_COUNT_INTERVAL must be a duration of at least 1s (e.g. 30s, 5m), got "${interval}"`);
  }
  const file = env.ZITI_EVENTS_FILE?.trim();
  return { namespaces: [...namespaces], file: file ? resolve(file) : undefined, entityCountIntervalMs: intervalMs };
}

/**
 * Reads the gateway's configuration, failing fast with the name of the offending key.
 *
 * | Key | Default |
 * |---|---|
 * | `ZITI_CTRL_LISTEN_HOST` | `0.0.0.0` |
 * | `ZITI_CTRL_PORT` | `1280` |
 * | `ZITI_CTRL_ADVERTISED_ADDRESS` | listener host (`localhost` for a wildcard) and port |
 * | `ZITI_CTRL_SANS` | none (comma list of extra certificate names/addresses) |
 * | `ZITI_DATA_DIR` | `./data` |
 * | `ZITI_INTERNAL_SECRET`, `ZITI_SERVER_KEY_SECRET` | required (at least 32 characters, no placeholder) |
 * | `ZITI_INTERNAL_TLS_DIR` | required by the standalone `main` (the gateway's internal certificate: `ca.crt`, `tls.crt`, `tls.key`) |
 * | `NATS_URL`, `REDIS_URL` | none (required by the standalone `main`) |
 * | `IDENTITY_AUTH_URL`, `PKI_ENROLLMENT_URL`, `POLICY_URL`, `SESSION_URL`, `POSTURE_URL`, `FABRIC_URL` | `https://127.0.0.1:1810{1..6}` (HTTPS only: the contexts answer the gateway's internal certificate) |
 * | `IDENTITY_AUTH_GRPC` | `127.0.0.1:18201` |
 * | `PKI_ENROLLMENT_GRPC` | `127.0.0.1:18202` (TLS credentials and the JWT signer come from there) |
 * | `POLICY_GRPC`, `SESSION_GRPC`, `POSTURE_GRPC`, `FABRIC_GRPC` | `127.0.0.1:1820{3,4,5,6}` (fan-out operations) |
 * | `ZITI_INSTANCE_ID` | the host name |
 * | `ZITI_REVISION` | `local` |
 * | `ZITI_ZAC_DIR` | none (a directory holding a ZAC build, served at `/zac/`) |
 * | guards | see {@link loadGuardConfig} |
 * | event stream | see {@link loadEventStreamConfig} |
 */
export function loadConfig(env: NodeJS.ProcessEnv): GatewayConfig {
  const advertised = env.ZITI_CTRL_ADVERTISED_ADDRESS?.trim();
  if (advertised && !/^(\[[0-9a-fA-F:.]+\]|[^\s:/]+)(:\d{1,5})?$/.test(advertised)) {
    throw new Error(`ZITI_CTRL_ADVERTISED_ADDRESS must be host or host:port, got "${advertised}"`);
  }
  return {
    listen: { host: env.ZITI_CTRL_LISTEN_HOST?.trim() || '0.0.0.0', port: intEnv(env, 'ZITI_CTRL_PORT', 1280) },
    advertisedAddress: advertised || undefined,
    extraSans: (env.ZITI_CTRL_SANS ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0),
    dataDir: resolve(env.ZITI_DATA_DIR?.trim() || 'data'),
    internalSecret: requireSecret(env, 'ZITI_INTERNAL_SECRET'),
    serverKeySecret: requireSecret(env, 'ZITI_SERVER_KEY_SECRET'),
    natsUrl: url(env, 'NATS_URL'),
    redisUrl: url(env, 'REDIS_URL'),
    upstreams: {
      'identity-auth': httpsUrl(env, 'IDENTITY_AUTH_URL', 'https://127.0.0.1:18101'),
      'pki-enrollment': httpsUrl(env, 'PKI_ENROLLMENT_URL', 'https://127.0.0.1:18102'),
      policy: httpsUrl(env, 'POLICY_URL', 'https://127.0.0.1:18103'),
      session: httpsUrl(env, 'SESSION_URL', 'https://127.0.0.1:18104'),
      posture: httpsUrl(env, 'POSTURE_URL', 'https://127.0.0.1:18105'),
      fabric: httpsUrl(env, 'FABRIC_URL', 'https://127.0.0.1:18106'),
    },
    identityAuthGrpc: hostPort(env, 'IDENTITY_AUTH_GRPC', '127.0.0.1:18201'),
    pkiEnrollmentGrpc: hostPort(env, 'PKI_ENROLLMENT_GRPC', '127.0.0.1:18202'),
    contextGrpc: {
      'identity-auth': hostPort(env, 'IDENTITY_AUTH_GRPC', '127.0.0.1:18201'),
      'pki-enrollment': hostPort(env, 'PKI_ENROLLMENT_GRPC', '127.0.0.1:18202'),
      policy: hostPort(env, 'POLICY_GRPC', '127.0.0.1:18203'),
      session: hostPort(env, 'SESSION_GRPC', '127.0.0.1:18204'),
      posture: hostPort(env, 'POSTURE_GRPC', '127.0.0.1:18205'),
      fabric: hostPort(env, 'FABRIC_GRPC', '127.0.0.1:18206'),
    },
    snapshotDir: env.ZITI_SNAPSHOT_DIR?.trim() ? resolve(env.ZITI_SNAPSHOT_DIR.trim()) : undefined,
    instanceId: env.ZITI_INSTANCE_ID?.trim() || undefined,
    revision: env.ZITI_REVISION?.trim() || 'local',
    consoleDir: env.ZITI_ZAC_DIR?.trim() ? resolve(env.ZITI_ZAC_DIR.trim()) : undefined,
    events: loadEventStreamConfig(env),
    ...loadGuardConfig(env),
  };
}
