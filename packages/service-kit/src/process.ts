import { createServer } from 'node:https';
import { DEFAULT_SHUTDOWN_GRACE_SECONDS, beginProcessShutdown, sendJson, sendUnavailable, setShutdownGraceMs } from '@ziti/http-kit';
import { lineLogger, logger } from '@ziti/log';
import { internalServerOptions } from './http.js';
import { type ContextName, internalCredentials } from './internal-tls.js';

/** How a process starts and stops (`lifecycleConfig`). */
export interface LifecycleConfig {
  /** In-flight requests get this long once SIGTERM arrived (`ZITI_SHUTDOWN_GRACE_SECONDS`). */
  shutdownGraceMs: number;
  /** How long a start waits for PostgreSQL, NATS and Redis before it gives up (`ZITI_DEPENDENCY_WAIT_SECONDS`). */
  dependencyWaitMs: number;
}

/** Default of `ZITI_DEPENDENCY_WAIT_SECONDS`. */
export const DEFAULT_DEPENDENCY_WAIT_SECONDS = 300;

/**
 * Reads the start and stop settings of every process.
 *
 * | Key | Default |
 * |---|---|
 * | `ZITI_SHUTDOWN_GRACE_SECONDS` | `20` (0..3600; below Kubernetes' default `terminationGracePeriodSeconds` of 30) |
 * | `ZITI_DEPENDENCY_WAIT_SECONDS` | `300` (0..86400; 0: no waiting, a dependency that is down fails the start) |
 */
export function lifecycleConfig(env: NodeJS.ProcessEnv): LifecycleConfig {
  return {
    shutdownGraceMs: intEnv(env, 'ZITI_SHUTDOWN_GRACE_SECONDS', DEFAULT_SHUTDOWN_GRACE_SECONDS, 0, 3600) * 1000,
    dependencyWaitMs: intEnv(env, 'ZITI_DEPENDENCY_WAIT_SECONDS', DEFAULT_DEPENDENCY_WAIT_SECONDS, 0, 86_400) * 1000,
  };
}

/** The lines of the process plumbing whose caller gave no log of its own. */
const processLog = logger('process');

/** Time a stop may take beyond the grace (consumers, pools, the event bus) before the process gives up on it. */
const STOP_MARGIN_MS = 15_000;

/**
 * Runs `stop` once on SIGTERM or SIGINT, then exits 0 (1 when `stop` failed or overran). For
 * `main.ts` of every service. At once: readiness of everything in the process answers not-ready
 * (`beginProcessShutdown`); listeners then drain for at most `graceMs` (their in-flight requests
 * finish, new ones are answered 503). A `stop` still running `graceMs` + 15 s later is abandoned
 * (exit 1). A second signal exits at once.
 */
export function onShutdown(stop: () => Promise<void>, log: (m: string) => void = lineLogger(processLog), opts: { graceMs?: number } = {}): void {
  if (opts.graceMs !== undefined) setShutdownGraceMs(opts.graceMs);
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    beginProcessShutdown();
    log(`${signal} received, shutting down (in-flight requests get ${Math.round((opts.graceMs ?? DEFAULT_SHUTDOWN_GRACE_SECONDS * 1000) / 1000)} s)`);
    const overrun = setTimeout(() => {
      log('shutdown did not finish in time, exiting');
      process.exit(1);
    }, (opts.graceMs ?? DEFAULT_SHUTDOWN_GRACE_SECONDS * 1000) + STOP_MARGIN_MS);
    overrun.unref();
    stop()
      .then(() => {
        log('stopped');
        process.exit(0);
      })
      .catch((err: unknown) => {
        processLog.error({ err }, 'stopping failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => handler('SIGTERM'));
  process.on('SIGINT', () => handler('SIGINT'));
}

/** The message of an error, on one line (no stack). */
function oneLine(err: unknown): string {
  const e = err as { message?: unknown; code?: unknown; errors?: unknown[] };
  // An AggregateError (every address of a host refused) says nothing itself: its first error does.
  const first = Array.isArray(e?.errors) && e.errors.length > 0 ? (e.errors[0] as { message?: unknown }) : undefined;
  const message = String((typeof e?.message === 'string' && e.message) || first?.message || e?.code || err);
  return message.replace(/\s+/g, ' ').trim();
}

/**
 * Calls `attempt` until it succeeds, with backoff (250 ms doubling to 5 s), for at most
 * `timeoutMs`: a dependency (PostgreSQL, NATS, Redis) that is not up yet is waited for instead of
 * failing the start. One log line when it is first found down (and one each time its error
 * changes), one when it answers; after `timeoutMs` the last error is thrown with `what` in its
 * message. `timeoutMs` 0: one attempt.
 */
export async function waitForDependency<T>(
  what: string,
  attempt: () => Promise<T>,
  opts: { timeoutMs: number; log?: (m: string) => void; delays?: { firstMs: number; maxMs: number } },
): Promise<T> {
  const log = opts.log ?? lineLogger(processLog);
  const started = Date.now();
  let delay = opts.delays?.firstMs ?? 250;
  const maxDelay = opts.delays?.maxMs ?? 5_000;
  let lastError: string | undefined;
  for (;;) {
    try {
      const value = await attempt();
      if (lastError !== undefined) log(`${what} is reachable (waited ${((Date.now() - started) / 1000).toFixed(1)} s)`);
      return value;
    } catch (err) {
      const message = oneLine(err);
      const waited = Date.now() - started;
      if (waited + delay > opts.timeoutMs) {
        throw new Error(`${what} is not reachable${opts.timeoutMs > 0 ? ` after ${Math.round(waited / 1000)} s` : ''}: ${message}`);
      }
      if (message !== lastError) log(`waiting for ${what}: ${message} (retrying for up to ${Math.round(opts.timeoutMs / 1000)} s)`);
      lastError = message;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, maxDelay);
    }
  }
}

/**
 * While a context waits for its dependencies, its HTTP port answers: `/healthz` 200 (the process
 * lives), `/readyz` and everything else 503 (`SERVICE_UNAVAILABLE` in the envelope), so probes
 * see a context that is starting rather than a closed port. Closed before the context itself
 * listens on the port. Port 0 (ephemeral) has nothing to hold: no listener. It tells no more than
 * the probes of the context's listener, so it answers any caller.
 */
export async function servePending(name: ContextName, host: string, port: number): Promise<{ close(): Promise<void> }> {
  if (port === 0) return { close: async () => undefined };
  // Over HTTPS with the context's internal identity, as its listener will be (the gateway dials TLS).
  const server = createServer(internalServerOptions(internalCredentials(name)), (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') return sendJson(res, { service: name, status: 'ok' });
    if (path === '/readyz') {
      res.statusCode = 503;
      res.setHeader('connection', 'close');
      return sendJson(res, { service: name, ready: false });
    }
    sendUnavailable(res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

let guarded = false;

/**
 * Keeps one request's unexpected failure from ending the process that serves every other request:
 * a promise rejection nobody handled, or an exception thrown outside any handler (in a library's
 * callback, say), is logged with its stack and the process goes on. The request it belonged to
 * gets its answer from its own error path or its timeout. For `main.ts` of every service and of
 * the all-in-one controller; installing it twice is a no-op.
 */
export function guardProcess(log: (message: string, err: unknown) => void = (m, err) => processLog.error({ err }, m)): void {
  if (guarded) return;
  guarded = true;
  process.on('unhandledRejection', (reason) => log('unhandled promise rejection (the process goes on):', reason));
  process.on('uncaughtException', (err, origin) => log(`uncaught exception in ${origin} (the process goes on):`, err));
}

/** Reads a required environment variable, failing fast with its name. */
export function requireEnv(env: NodeJS.ProcessEnv, key: string): string {
  const v = env[key];
  if (v === undefined || v === '') throw new Error(`configuration: ${key} is required`);
  return v;
}

/** Values of a secret that are placeholders, never a secret someone chose (any case, ignoring `-`, `_` and spaces). */
const PLACEHOLDER_SECRETS = new Set(['changeme', 'change', 'secret', 'password', 'placeholder', 'todo', 'xxx', 'replaceme']);

/** The shortest secret a process accepts from its environment. */
export const MIN_SECRET_LENGTH = 32;

/**
 * A required secret from the environment: a placeholder (`change-me`, …) or one shorter than
 * 32 characters refuses the start, naming the variable (never its value).
 */
export function requireSecret(env: NodeJS.ProcessEnv, key: string): string {
  const v = requireEnv(env, key);
  if (PLACEHOLDER_SECRETS.has(v.toLowerCase().replace(/[-_\s]/g, ''))) throw new Error(`configuration: ${key} holds a placeholder value; set a random secret (e.g. openssl rand -base64 48)`);
  if (v.length < MIN_SECRET_LENGTH) throw new Error(`configuration: ${key} must be at least ${MIN_SECRET_LENGTH} characters`);
  return v;
}

/** An optional secret: unset or empty = undefined; otherwise checked as `requireSecret` does. */
export function optionalSecret(env: NodeJS.ProcessEnv, key: string): string | undefined {
  return env[key] ? requireSecret(env, key) : undefined;
}

/** Reads an optional boolean environment variable: true/1/yes/on or false/0/no/off (any case); unset or empty = `fallback`. */
export function boolEnv(env: NodeJS.ProcessEnv, key: string, fallback: boolean): boolean {
  const raw = env[key]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw new Error(`configuration: ${key} must be true or false (on or off), got "${env[key]}"`);
}

/** Reads an optional integer environment variable within bounds, failing fast with its name. */
export function intEnv(env: NodeJS.ProcessEnv, key: string, fallback: number, min = 0, max = 65535): number {
  const raw = env[key];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`configuration: ${key} must be an integer in ${min}..${max}, got "${raw}"`);
  return n;
}

/**
 * Whether `ZITI_EVENTS` (the namespaces of the OpenZiti-format event stream the gateway emits;
 * unset = the default ones, `none` = no stream) names any of `namespaces`: a context publishes the
 * events only that stream reads (logins, sessions, router metrics) only while it is wanted. The
 * gateway validates the list. `byDefault`: whether the namespaces are among the default ones.
 */
export function eventNamespacesEnabled(env: NodeJS.ProcessEnv, namespaces: readonly string[], byDefault = true): boolean {
  const raw = env.ZITI_EVENTS?.trim();
  if (!raw) return byDefault;
  const named = raw.split(',').map((s) => s.trim());
  return namespaces.some((ns) => named.includes(ns));
}
