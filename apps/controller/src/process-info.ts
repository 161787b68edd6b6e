import { execFileSync } from 'node:child_process';
import { readFileSync, readlinkSync, realpathSync } from 'node:fs';

/**
 * What the operating system says about other processes, for the data directory lock and the
 * embedded PostgreSQL's watchdog. On Linux everything comes from `/proc`; elsewhere only what
 * `kill(pid, 0)` and `ps` tell.
 */

const LINUX = process.platform === 'linux';

function readProc(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

/** The fields of `/proc/<pid>/stat` after the command name (which may hold spaces and parentheses): [0] = state. */
function statFields(pid: number): string[] | undefined {
  const stat = readProc(pid, 'stat');
  if (stat === undefined) return undefined;
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** Whether a process with this pid exists at all, zombies included (signal 0; EPERM means it exists). */
export function processExists(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the process runs: it exists and, on Linux, is not a zombie (exited, waiting to be reaped). */
export function isRunning(pid: number): boolean {
  if (!processExists(pid)) return false;
  if (!LINUX) return true;
  const state = statFields(pid)?.[0];
  return state !== undefined && state !== 'Z' && state !== 'X';
}

/**
 * An identity of the running process `pid` that a later process with the same pid does not share:
 * on Linux the boot id and the start time in clock ticks since boot (`/proc/<pid>/stat` field 22);
 * undefined elsewhere or when the process is gone.
 */
export function processStartTime(pid: number): string | undefined {
  if (!LINUX) return undefined;
  const started = statFields(pid)?.[19];
  let boot = 'boot';
  try {
    boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    // an older or restricted /proc: the start time alone
  }
  return started === undefined ? undefined : `${boot}:${started}`;
}

/** Where a process stands to a PostgreSQL cluster directory. */
export type ClusterRelation = 'this-cluster' | 'other' | 'unknown';

/**
 * Whether the running process `pid` belongs to the cluster in `clusterDir`. On Linux by its working
 * directory (a postmaster and all its children change into their data directory): `other` when
 * that is readable and elsewhere, `unknown` when it is not readable (another user's process, which
 * PostgreSQL itself then does not count as a postmaster). Elsewhere by the command line `-D <dir>`
 * of our own start, never `other`.
 */
export function clusterRelation(pid: number, clusterDir: string): ClusterRelation {
  if (!isRunning(pid)) return 'unknown';
  let cluster: string;
  try {
    cluster = realpathSync(clusterDir);
  } catch {
    return 'unknown';
  }
  if (LINUX) {
    try {
      return realpathSync(readlinkSync(`/proc/${pid}/cwd`)) === cluster ? 'this-cluster' : 'other';
    } catch {
      return 'unknown';
    }
  }
  try {
    const command = execFileSync('ps', ['-o', 'command=', '-p', String(pid)], { encoding: 'utf8' });
    return command.includes(`-D ${clusterDir}`) || command.includes(`-D ${cluster}`) ? 'this-cluster' : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Polls `done` every `intervalMs` until it holds (true) or `timeoutMs` passed (false). */
export async function waitUntil(done: () => boolean, timeoutMs: number, intervalMs = 100): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (done()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
