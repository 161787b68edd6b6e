import { spawn } from 'node:child_process';
import { configureLogging, lineLogger, logger } from '@ziti/log';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { postmasterPid, stopPostmaster } from './postmaster.js';
import { isRunning } from './process-info.js';

/**
 * The embedded PostgreSQL runs in its own process group (so that Ctrl-C reaches only the
 * controller, which stops the services before the database), so nothing stops it when the
 * controller dies without stopping it (SIGKILL, the OOM killer, a crash of Node itself). Node has
 * no parent-death signal, so a small watchdog process does it: a Node process in its own process
 * group and session, with an IPC channel to the controller. When that channel closes without a
 * `done` message first, the controller is gone, and the watchdog stops the postmaster (fast
 * shutdown, then immediate, then SIGKILL) and exits. On a normal stop the controller stops
 * PostgreSQL itself and then sends `done`.
 *
 * Messages, controller → watchdog: `{ postmaster: <pid> }` once PostgreSQL is spawned,
 * `{ done: true }` on a normal stop; watchdog → controller: `{ ready: true }` once it listens.
 */

/** The controller's handle on its watchdog. */
export interface PostgresWatchdog {
  pid: number;
  /** Tells the watchdog which postmaster to stop (else it reads `postmaster.pid`). */
  watch(postmasterPid: number): void;
  /** After PostgreSQL was stopped: lets the watchdog exit without doing anything; resolves when it has. */
  finish(): Promise<void>;
}

type Message = { postmaster?: number; done?: boolean };

const PREFIX = '[postgres watchdog]';

/** Starts the watchdog of the cluster in `clusterDir` and resolves once it is ready. */
export async function startWatchdog(clusterDir: string, log: (m: string) => void): Promise<PostgresWatchdog> {
  const script = watchdogScript();
  const child = spawn(process.execPath, [script, clusterDir], { detached: true, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let finishing = false;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error('no answer within 15 s')), 15_000);
    const onExit = (code: number | null, signal: string | null) => fail(new Error(`exited (${signal ?? code})`));
    function fail(err: Error) {
      clearTimeout(timer);
      child.off('exit', onExit);
      child.kill('SIGKILL');
      reject(new Error(`embedded PostgreSQL: the watchdog (${script}) did not start: ${err.message}`));
    }
    child.once('error', fail);
    child.once('exit', onExit);
    child.once('message', () => {
      clearTimeout(timer);
      child.off('exit', onExit);
      resolve();
    });
  });
  child.once('exit', (code, signal) => {
    if (!finishing) log(`the PostgreSQL watchdog (pid ${child.pid}) exited (${signal ?? code}); PostgreSQL is no longer stopped if this process dies`);
  });
  // While it watches, neither the process nor its channel keeps this process alive.
  const channel = (child as unknown as { channel?: { ref(): void; unref(): void } }).channel;
  child.unref();
  channel?.unref();
  const send = (m: Message) => {
    if (child.connected) child.send(m);
  };
  return {
    pid: child.pid as number,
    watch: (pid) => send({ postmaster: pid }),
    finish: async () => {
      finishing = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.ref(); // waited for below
      send({ done: true });
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(resolve, 5_000, 'timeout')));
      if ((await Promise.race([exited, timeout])) === 'timeout') child.kill('SIGKILL');
      clearTimeout(timer);
    },
  };
}

/** The compiled watchdog (this file); from the sources (tests through SWC) the built one in `dist`. */
function watchdogScript(): string {
  if (__filename.endsWith('.js')) return __filename;
  const built = join(__dirname, '..', 'dist', 'postgres-watchdog.js');
  if (!existsSync(built)) throw new Error(`embedded PostgreSQL: ${built} is missing; build apps/controller first`);
  return built;
}

/** The watchdog process itself: `node postgres-watchdog.js <clusterDir>`. */
function runWatchdog(clusterDir: string): void {
  const controller = process.ppid;
  // Its stdout is not kept: its log lines go to the stderr it shares with the controller.
  configureLogging({ destination: process.stderr });
  const log = lineLogger(logger('postgres-watchdog'), 'warn');
  let postmaster: number | undefined;
  let done = false;
  process.on('message', (m: Message) => {
    if (typeof m?.postmaster === 'number') postmaster = m.postmaster;
    if (m?.done) {
      done = true;
      process.disconnect();
    }
  });
  process.once('disconnect', () => {
    if (done) return;
    const pid = postmasterPid(clusterDir) ?? postmaster;
    if (pid === undefined || !isRunning(pid)) process.exit(0);
    log(`the controller (pid ${controller}) has ended without stopping PostgreSQL`);
    stopPostmaster(pid, clusterDir, log).then(
      () => process.exit(0),
      (err: unknown) => {
        log((err as Error).message);
        process.exit(1);
      },
    );
  });
  process.send?.({ ready: true });
}

if (require.main === module) {
  const clusterDir = process.argv[2];
  if (!clusterDir || !process.send) {
    process.stderr.write(`${PREFIX} usage: started by the controller with an IPC channel: node postgres-watchdog.js <clusterDir>\n`);
    process.exit(2);
  }
  runWatchdog(clusterDir);
}
