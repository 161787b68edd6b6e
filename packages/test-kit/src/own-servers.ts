import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A server of one test file alone, in its own temp dir on a free port, so that a test may stop,
 * restart or kill it (the shared servers of `testInfra()` must never be). `start()` brings it back
 * on the same port with the same data (Redis comes back empty: it persists nothing).
 */
export interface OwnServer {
  url: string;
  port: number;
  /** Graceful stop (SIGTERM / `pg_ctl stop -m fast`); resolves once the port is closed. */
  stop(): Promise<void>;
  /** Starts it again after `stop` or `kill`; resolves once it accepts connections. */
  start(): Promise<void>;
  /** SIGKILL (PostgreSQL: the postmaster and its backends); resolves once the processes are gone. */
  kill(): Promise<void>;
  /** Stops it (if running) and deletes its directory. */
  close(): Promise<void>;
}

const PG_BIN = process.env.ZITI_TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** A port nobody listens on right now (the kernel's pick). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(500, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

async function waitPort(port: number, open: boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while ((await accepts(port)) !== open) {
    if (Date.now() > until) throw new Error(`${what} on port ${port} did not ${open ? 'open' : 'close'} within ${timeoutMs} ms`);
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

async function waitGone(pids: number[], timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (pids.some(alive)) {
    if (Date.now() > until) throw new Error(`processes ${pids.join(',')} still alive after SIGKILL`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The direct children of `pid`, from /proc. */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // pid (comm) state ppid ...; comm may hold spaces and parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/**
 * A PostgreSQL cluster of its own (initdb as the `postgres` user when run as root, trust auth,
 * fsync off), listening on 127.0.0.1 only. `url` is its `postgres` database as `postgres`.
 */
export async function startOwnPostgres(): Promise<OwnServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ziti-own-pg-'));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const pg = (tool: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(PG_BIN, tool), ...args]) : run(join(PG_BIN, tool), args);
  await pg('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200`;
  const start = async () => {
    await pg('pg_ctl', ['start', '-w', '-t', '30', '-D', data, '-l', join(dir, 'log'), '-o', options]);
  };
  const postmasterPid = (): number | undefined => {
    try {
      return Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    } catch {
      return undefined;
    }
  };
  const stop = async () => {
    const pid = postmasterPid();
    if (pid === undefined || !alive(pid)) return;
    await pg('pg_ctl', ['stop', '-w', '-m', 'fast', '-D', data]);
  };
  const kill = async () => {
    const pid = postmasterPid();
    if (pid === undefined || !alive(pid)) return;
    const all = [pid, ...childrenOf(pid)];
    for (const p of all) process.kill(p, 'SIGKILL');
    // A killed postmaster leaves its pid file; pg_ctl start copes with a stale one.
    await waitGone(all);
  };
  await start();
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    port,
    start,
    stop,
    kill,
    async close() {
      await stop().catch(kill);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A server run as a child process of the test (NATS, Redis). */
function ownProcess(port: number, dir: string, what: string, command: string, args: string[]): OwnServer & { url: string } {
  let child: ChildProcess | undefined;
  const exited = new Map<ChildProcess, Promise<void>>();
  const start = async () => {
    if (child) return;
    const c = spawn(command, args, { cwd: dir, stdio: 'ignore' });
    exited.set(c, new Promise((resolve) => c.once('exit', () => resolve())));
    c.once('exit', () => {
      if (child === c) child = undefined;
    });
    child = c;
    await waitPort(port, true, what);
  };
  const end = async (signal: NodeJS.Signals) => {
    const c = child;
    if (!c) return;
    c.kill(signal);
    await exited.get(c);
    exited.delete(c);
    await waitPort(port, false, what);
  };
  return {
    url: '',
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

/** A NATS server with JetStream of its own (store in its temp dir, kept across stop/start). */
export async function startOwnNats(): Promise<OwnServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ziti-own-nats-'));
  const server = ownProcess(port, dir, 'nats-server', 'nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', join(dir, 'js')]);
  server.url = `nats://127.0.0.1:${port}`;
  await server.start();
  return server;
}

/** A Redis server of its own, persisting nothing: it comes back empty after stop or kill. */
export async function startOwnRedis(): Promise<OwnServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ziti-own-redis-'));
  const server = ownProcess(port, dir, 'redis-server', 'redis-server', [
    '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir,
  ]);
  server.url = `redis://127.0.0.1:${port}`;
  await server.start();
  return server;
}
