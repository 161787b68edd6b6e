import { readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { clusterRelation, isRunning, processExists, waitUntil } from './process-info.js';

/** How long each step of `stopPostmaster` waits before the next, harder one. */
export interface StopTimeouts {
  /** After SIGINT (fast shutdown: sessions end, a shutdown checkpoint is written). Default 30 s. */
  fastMs?: number;
  /** After SIGQUIT (immediate shutdown: no checkpoint, crash recovery at the next start). Default 15 s. */
  immediateMs?: number;
  /** After SIGKILL. Default 5 s. */
  killMs?: number;
}

/** The pid in `<clusterDir>/postmaster.pid` (its first line), if the file is there and names one. */
export function postmasterPid(clusterDir: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(join(clusterDir, 'postmaster.pid'), 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number(text.split('\n', 1)[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * Stops the postmaster `pid` of the cluster in `clusterDir` and resolves once it has exited:
 * SIGINT (fast shutdown), then SIGQUIT (immediate shutdown), then SIGKILL, each after the
 * previous one's timeout. Signals only while the process still belongs to that cluster, so a pid
 * reused meanwhile is left alone. Rejects when it is still running after the last step.
 */
export async function stopPostmaster(pid: number, clusterDir: string, log: (m: string) => void, timeouts: StopTimeouts = {}): Promise<void> {
  const steps: [NodeJS.Signals, string, number][] = [
    ['SIGINT', 'fast shutdown', timeouts.fastMs ?? 30_000],
    ['SIGQUIT', 'immediate shutdown', timeouts.immediateMs ?? 15_000],
    ['SIGKILL', 'SIGKILL', timeouts.killMs ?? 5_000],
  ];
  for (const [signal, what, ms] of steps) {
    if (clusterRelation(pid, clusterDir) !== 'this-cluster') break;
    log(`stopping PostgreSQL (pid ${pid}, ${clusterDir}): ${what}`);
    try {
      process.kill(pid, signal);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') break;
      throw err;
    }
    if (await waitUntil(() => !isRunning(pid), ms)) break;
  }
  if (isRunning(pid) && clusterRelation(pid, clusterDir) === 'this-cluster') {
    throw new Error(`PostgreSQL (pid ${pid}) on ${clusterDir} is still running after SIGKILL`);
  }
  // Exited without removing its lock file (SIGKILL) and not reaped yet: PostgreSQL would take the
  // zombie for a running postmaster, so the file goes now.
  removeIfNamesZombie(clusterDir, log);
}

/** The previous owner of the data directory, as its lock file named it. */
export interface PreviousController {
  pid: number;
  startedAt?: string;
}

/**
 * Makes the cluster in `clusterDir` startable after whatever ended its last run, before PostgreSQL
 * starts. By what `postmaster.pid` names:
 * - nothing, or a process that is gone: nothing to do (PostgreSQL replaces a stale file itself);
 * - a zombie (exited, not reaped yet; PostgreSQL would count it as running): the file is removed;
 * - a live process of another directory (the pid was reused after a crash; PostgreSQL would
 *   refuse to start if it runs as the same user): the file is removed;
 * - a live postmaster of this cluster: when the controller that started it is gone
 *   (`previousController`, from the data directory lock) it is an orphan and is stopped
 *   (`stopPostmaster`); without such a controller it is somebody else's, and the start is refused.
 */
export async function clearStalePostmaster(
  clusterDir: string,
  previousController: PreviousController | undefined,
  log: (m: string) => void,
  timeouts?: StopTimeouts,
): Promise<void> {
  const pid = postmasterPid(clusterDir);
  if (pid === undefined) return;
  if (!isRunning(pid)) {
    if (removeIfNamesZombie(clusterDir, log)) return;
    log(`${join(clusterDir, 'postmaster.pid')} names pid ${pid}, which is gone: PostgreSQL replaces it`);
    return;
  }
  const relation = clusterRelation(pid, clusterDir);
  if (relation === 'other') {
    log(`${join(clusterDir, 'postmaster.pid')} names pid ${pid}, now another process: removing the stale file`);
    unlinkIfNames(clusterDir, pid);
    return;
  }
  if (relation === 'unknown') return; // not ours to judge; PostgreSQL decides
  if (!previousController) {
    throw new Error(
      `embedded PostgreSQL: PostgreSQL (pid ${pid}) is already running on ${clusterDir}, and no controller holds ` +
        `its data directory. Stop it (kill -INT ${pid}) and start again.`,
    );
  }
  log(
    `PostgreSQL (pid ${pid}) is still running on ${clusterDir}, left behind by the controller process ` +
      `${previousController.pid}${previousController.startedAt ? ` (started ${previousController.startedAt})` : ''}, which has ended: stopping it`,
  );
  await stopPostmaster(pid, clusterDir, log, timeouts);
}

function removeIfNamesZombie(clusterDir: string, log: (m: string) => void): boolean {
  const pid = postmasterPid(clusterDir);
  if (pid === undefined || isRunning(pid) || !processExists(pid)) return false;
  log(`${join(clusterDir, 'postmaster.pid')} names pid ${pid}, which has exited (not yet reaped): removing the stale file`);
  unlinkIfNames(clusterDir, pid);
  return true;
}

function unlinkIfNames(clusterDir: string, pid: number): void {
  if (postmasterPid(clusterDir) !== pid) return;
  try {
    unlinkSync(join(clusterDir, 'postmaster.pid'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
