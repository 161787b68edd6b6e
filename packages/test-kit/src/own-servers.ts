import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/**
 * A PostgreSQL, NATS or Redis server that belongs to one test run alone: its own temp directory
 * and a free loopback port, so a test may stop, start or kill it. The shared servers of
 * `testInfra()` serve every engineer's tests and must never be stopped; these exist for that.
 */
export interface OwnServer {
  /** How clients reach it (`postgresql://…`, `nats://…`, `redis://…`). */
  url: string;
  port: number;
  /** A graceful stop (SIGTERM; PostgreSQL `pg_ctl stop -m fast`); resolves once the port is closed. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same directory; resolves once it accepts connections. Redis comes back empty. */
  start(): Promise<void>;
  /** SIGKILL of the server (PostgreSQL: the postmaster and every backend); resolves once they are gone. */
  kill(): Promise<void>;
  /** Stops it if it runs and deletes its directory. */
  close(): Promise<void>;
}

/** Where PostgreSQL's server binaries are (`ZITI_TEST_PG_BIN`, default the Debian path of PostgreSQL 15). */
const PG_BIN = process.env.ZITI_TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const START_TIMEOUT_MS = 30_000;

/** Ports this process handed out: a port closed again is not handed out twice (the kernel may pick it again). */
const handedOut = new Set<number>();

/**
 * The first port of the kernel's ephemeral range (the source ports of outgoing connections).
 * Servers here are stopped and started again on the same port while clients keep reconnecting to
 * it: a port inside that range can meanwhile be taken as a client's source port, or a client can
 * connect to itself on it (Linux's TCP self-connect), and the server cannot bind it again.
 */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 2048 ? low : 32768;
  } catch {
    return 32768;
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A loopback port nobody listens on at this instant, below the ephemeral range (see
 * `ephemeralLow`), and not one this process handed out before.
 */
export async function freePort(): Promise<number> {
  const low = 10_000;
  const high = ephemeralLow() - 1;
  for (let attempt = 0; attempt < 1_000; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port between ${low} and ${high}`);
}

function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function waitForPort(port: number, open: boolean, what: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while ((await accepting(port)) !== open) {
    if (Date.now() > deadline) throw new Error(`${what} (port ${port}) did not ${open ? 'open' : 'close'} within ${START_TIMEOUT_MS} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitForExit(pids: number[], what: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (pids.some(alive)) {
    if (Date.now() > deadline) throw new Error(`${what}: processes ${pids.filter(alive).join(', ')} did not exit`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Server processes still running when the test process ends are killed, so none outlives its run:
 * on exit, and on SIGINT/SIGTERM (after which the signal takes its usual course).
 */
const leftovers = new Set<() => void>();
let hooked = false;
function killLeftovers(): void {
  for (const kill of leftovers) {
    try {
      kill();
    } catch {
      // Already gone.
    }
  }
  leftovers.clear();
}
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.once('exit', killLeftovers);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      killLeftovers();
      process.kill(process.pid, signal);
    });
  }
}

/**
 * A server that is one child process (NATS, Redis): `args` start it on `port`; its output is
 * appended to `<dir>/server.log`.
 */
async function childServer(what: string, url: string, port: number, dir: string, command: string, args: string[]): Promise<OwnServer> {
  let child: ChildProcess | undefined;
  const killNow = () => child?.kill('SIGKILL');
  const exited = (c: ChildProcess) => new Promise<void>((resolve) => (c.exitCode !== null || c.signalCode !== null ? resolve() : c.once('exit', () => resolve())));
  const start = async () => {
    if (child) throw new Error(`${what} is already running`);
    const log = openSync(join(dir, 'server.log'), 'a');
    try {
      child = spawn(command, args, { cwd: dir, stdio: ['ignore', log, log] });
    } finally {
      closeSync(log);
    }
    const started = child;
    started.once('exit', () => {
      if (child === started) child = undefined;
    });
    hookExit();
    leftovers.add(killNow);
    await waitForPort(port, true, what);
  };
  const end = async (signal: NodeJS.Signals) => {
    const running = child;
    if (!running) return;
    running.kill(signal);
    await exited(running);
    leftovers.delete(killNow);
    await waitForPort(port, false, what);
  };
  await start();
  return {
    url,
    port,
    start,
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
    async close() {
      await end('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** NATS with JetStream, its store in the temp directory (streams and consumers survive a stop). */
export async function startOwnNats(): Promise<OwnServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ziti-own-nats-'));
  return childServer('NATS', `nats://127.0.0.1:${port}`, port, dir, 'nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', join(dir, 'jetstream')]);
}

/** Redis that persists nothing: after `kill` and `start` it is empty, as a restarted cache pod is. */
export async function startOwnRedis(): Promise<OwnServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ziti-own-redis-'));
  return childServer('Redis', `redis://127.0.0.1:${port}`, port, dir, 'redis-server', [
    '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir,
  ]);
}

/** The processes whose parent is `pid` (PostgreSQL's backends and workers), from /proc. */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Field 4 of /proc/<pid>/stat is the parent; the name in field 2 may hold spaces, so split after its ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

/**
 * PostgreSQL in a fresh cluster (`initdb`, trust authentication, superuser `postgres`), run as the
 * `postgres` user when the tests run as root (PostgreSQL refuses to run as root), listening on
 * 127.0.0.1 and a socket in the temp directory. fsync is off: the cluster lives as long as the run.
 */
export async function startOwnPostgres(): Promise<OwnServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ziti-own-pg-'));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const [uid, gid] = await Promise.all([exec('id', ['-u', 'postgres']), exec('id', ['-g', 'postgres'])]).then((r) => r.map((x) => Number(x.stdout.trim())));
    chownSync(dir, uid!, gid!);
  }
  const pg = (tool: string, args: string[]) =>
    asRoot ? exec('runuser', ['-u', 'postgres', '--', join(PG_BIN, tool), ...args], { cwd: dir }) : exec(join(PG_BIN, tool), args, { cwd: dir });
  await pg('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300`;
  const postmasterPid = () => {
    const file = join(data, 'postmaster.pid');
    return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : undefined;
  };
  const killNow = () => {
    const pid = postmasterPid();
    if (pid && alive(pid)) for (const p of [pid, ...childrenOf(pid)]) process.kill(p, 'SIGKILL');
  };
  const start = async () => {
    await pg('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'server.log'), '-w', '-t', String(START_TIMEOUT_MS / 1000), 'start']);
    hookExit();
    leftovers.add(killNow);
  };
  const stop = async () => {
    if (!postmasterPid()) return;
    await pg('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
    leftovers.delete(killNow);
    await waitForPort(port, false, 'PostgreSQL');
  };
  await start();
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    port,
    start,
    stop,
    async kill() {
      const pid = postmasterPid();
      if (!pid) return;
      const pids = [pid, ...childrenOf(pid)];
      for (const p of pids) process.kill(p, 'SIGKILL');
      await waitForExit(pids, 'PostgreSQL');
      leftovers.delete(killNow);
      // A postmaster killed outright leaves its pid file; the next start checks that pid is gone and goes on.
      await waitForPort(port, false, 'PostgreSQL');
    },
    async close() {
      await stop().catch(() => killNow());
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
