import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadEventStreamConfig, loadGuardConfig } from '@ziti/gateway';
import { LogSettingsError, configureLogging, lineLogger, logger } from '@ziti/log';
import { metricsHost, metricsPort } from '@ziti/metrics';
import { boolEnv, guardProcess, intEnv, lifecycleConfig, onShutdown } from '@ziti/service-kit';
import { DataDirInUseError, servicePortsFromEnv, startController } from './controller.js';

/**
 * `npm start`: the whole controller in one process. Without DATABASE_URL / NATS_URL / REDIS_URL
 * it needs no outside server (embedded PostgreSQL, in-process bus, in-memory cache).
 */
const controllerLog = logger('controller');

async function main(): Promise<void> {
  // First: an unknown ZITI_LOG_LEVEL or ZITI_LOG_FORMAT fails the start.
  configureLogging();
  guardProcess();
  const env = process.env;
  // npm sets INIT_CWD to where it was invoked, so `npm start` (root or -w) keeps data in <repo>/data.
  const dataDir = resolve(env.ZITI_DATA_DIR || join(env.INIT_CWD || process.cwd(), 'data'));
  const port = intEnv(env, 'ZITI_CTRL_PORT', 1280);
  const adminPassword = env.ZITI_PWD || undefined;
  const listenHost = env.ZITI_CTRL_LISTEN_HOST || '0.0.0.0';
  // One metrics endpoint for every context (ZITI_METRICS_PORT, default 9100; 0 = off).
  const metricsPortSetting = metricsPort(env, undefined, 9100);
  const log = lineLogger(controllerLog);
  const lifecycle = lifecycleConfig(env);
  const starting = startController({
    dataDir,
    databaseUrl: env.DATABASE_URL || undefined,
    natsUrl: env.NATS_URL || undefined,
    redisUrl: env.REDIS_URL || undefined,
    snapshotDir: env.ZITI_SNAPSHOT_DIR ? resolve(env.ZITI_SNAPSHOT_DIR) : undefined,
    zacDir: env.ZITI_ZAC_DIR?.trim() ? resolve(env.ZITI_ZAC_DIR.trim()) : undefined,
    listenHost,
    port,
    routerCtrlPort: intEnv(env, 'ZITI_ROUTER_CTRL_PORT', 6262),
    routerCtrlAdvertisedAddress: env.ZITI_ROUTER_CTRL_ADVERTISED_ADDRESS?.trim() || undefined,
    metricsPort: metricsPortSetting === 0 ? undefined : metricsPortSetting,
    metricsHost: metricsHost(env),
    // Unset, 9100 is a preference: a second controller on the host takes a free port instead.
    metricsPortPreferred: !env.ZITI_METRICS_PORT?.trim(),
    advertisedAddress: env.ZITI_CTRL_ADVERTISED_ADDRESS || undefined,
    extraSans: (env.ZITI_CTRL_SANS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    adminUsername: env.ZITI_USER || 'admin',
    adminPassword,
    servicePorts: servicePortsFromEnv(env),
    sessionTimeoutMinutes: env.ZITI_SESSION_TIMEOUT_MINUTES ? intEnv(env, 'ZITI_SESSION_TIMEOUT_MINUTES', 30, 0, 525600) : undefined,
    maxApiSessionsPerIdentity: env.ZITI_MAX_API_SESSIONS_PER_IDENTITY ? intEnv(env, 'ZITI_MAX_API_SESSIONS_PER_IDENTITY', 100, 0, 1_000_000) : undefined,
    maxApiSessionCertificates: env.ZITI_MAX_API_SESSION_CERTIFICATES ? intEnv(env, 'ZITI_MAX_API_SESSION_CERTIFICATES', 10, 0, 10_000) : undefined,
    mfaSecret: env.ZITI_MFA_SECRET || undefined,
    oidcKeyRotationDays: env.ZITI_OIDC_KEY_ROTATION_DAYS ? intEnv(env, 'ZITI_OIDC_KEY_ROTATION_DAYS', 30, 0, 3650) : undefined,
    totpIssuer: env.ZITI_TOTP_ISSUER || undefined,
    pkiKey: env.ZITI_PKI_KEY || undefined,
    outboundAllowPrivate: boolEnv(env, 'ZITI_OUTBOUND_ALLOW_PRIVATE', false),
    guards: loadGuardConfig(env),
    events: loadEventStreamConfig(env) ?? null,
    dependencyWaitMs: lifecycle.dependencyWaitMs,
    shutdownGraceMs: lifecycle.shutdownGraceMs,
  });
  // Registered before the start completes: a signal during the start stops what it started.
  onShutdown(async () => (await starting.catch(() => undefined))?.stop(), log, { graceMs: lifecycle.shutdownGraceMs });
  const ctrl = await starting;

  const host = shownHost(listenHost);
  const base = `https://${host}:${ctrl.port}`;
  const passwordFile = join(dataDir, 'admin-password');
  const password = adminPassword
    ? { where: 'the password from ZITI_PWD', shell: '$ZITI_PWD' }
    : existsSync(passwordFile)
      ? { where: `the password in ${passwordFile}`, shell: `$(cat '${passwordFile}')` }
      : { where: 'the password it was first created with (ZITI_PWD of that start)', shell: '$ZITI_PWD' };
  const body = `{\\"username\\":\\"${ctrl.adminUsername}\\",\\"password\\":\\"${password.shell}\\"}`;
  // The banner stays plain text on stdout, between the log's JSON lines: it is for the person who ran `npm start`.
  process.stdout.write(
    [
      '',
      `Ziti controller listening on ${ctrl.url}`,
      `  client API:     ${base}/edge/client/v1/version`,
      `  management API: ${base}/edge/management/v1`,
      `  router control: ${ctrl.routerCtrlEndpoint} (routers dial it; listening on ${host}:${ctrl.routerCtrlPort})`,
      `  data directory: ${dataDir}`,
      ...(ctrl.metricsPort ? [`  metrics:        http://${shownHost(metricsHost(env))}:${ctrl.metricsPort}/metrics`] : []),
      `Log in as "${ctrl.adminUsername}" with ${password.where}, e.g.:`,
      `  curl -k -X POST '${base}/edge/management/v1/authenticate?method=password' -H 'content-type: application/json' -d "${body}"`,
      '(send the zt-session token of the answer as the zt-session header of later requests)',
      '',
      '',
    ].join('\n'),
  );
}

/** How a bound address is shown in a URL: the wildcard as 127.0.0.1, IPv6 in brackets. */
function shownHost(bound: string): string {
  return bound === '0.0.0.0' || bound === '::' ? '127.0.0.1' : bound.includes(':') ? `[${bound}]` : bound;
}

main().catch((err) => {
  // A data directory held by another controller, or an unknown log setting, is an answer, not a bug: the message alone.
  if (err instanceof DataDirInUseError || err instanceof LogSettingsError) controllerLog.fatal(`not started: ${err.message}`);
  else controllerLog.fatal({ err }, 'not started');
  process.exit(1);
});
