import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PreviousController } from './postmaster.js';
import { isRunning, processStartTime } from './process-info.js';

/** Name of the lock file in the data directory. */
export const LOCK_FILE = 'controller.lock';

/** What the lock file holds (JSON). */
interface LockRecord {
  pid: number;
  /** `processStartTime` of that process (Linux), so that a later process with the same pid is not taken for it. */
  startTime?: string;
  startedAt: string;
}

/** The data directory of an embedded start is held by a controller that is still running. */
export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
    readonly startedAt: string | undefined,
  ) {
    super(
      `the data directory ${dataDir} is in use by the controller process ${pid}` +
        `${startedAt ? ` (started ${startedAt})` : ''}. Stop that controller first (Ctrl-C, or kill -INT ${pid}), ` +
        'or give this one its own ZITI_DATA_DIR (and ZITI_CTRL_PORT). If that process is not a controller, delete ' +
        `${join(dataDir, LOCK_FILE)}.`,
    );
    this.name = 'DataDirInUseError';
  }
}

/** A held data directory lock. */
export interface DataDirLock {
  /** The controller that held the directory before and ended without releasing it (a crash), if any. */
  previous?: PreviousController;
  /** Removes the lock file, if it is still this process's. */
  release(): void;
}

/**
 * Claims `<dataDir>/controller.lock` for this process (pid and start time), so that one data
 * directory serves one controller at a time. A lock naming a running controller is refused with
 * `DataDirInUseError` (nothing else in the directory is touched); a lock naming a process that has
 * ended (or whose pid now belongs to a later process) is taken over, and that process is returned
 * as `previous`: whatever it left running (its PostgreSQL) is an orphan.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const file = join(dataDir, LOCK_FILE);
  const own: LockRecord = { pid: process.pid, startTime: processStartTime(process.pid), startedAt: new Date().toISOString() };
  const text = `${JSON.stringify(own)}\n`;
  let previous: PreviousController | undefined;
  // Two rounds: a stale lock is removed once; if another start claims the file in between, the
  // second round finds that one running.
  for (let round = 0; round < 2; round++) {
    if (createWith(file, text)) return { previous, release: () => releaseIfOwn(file, text) };
    const found = readText(file);
    if (found === undefined) continue; // removed meanwhile
    const record = parse(found);
    if (record && holdsLock(record)) throw new DataDirInUseError(dataDir, record.pid, record.startedAt);
    if (record) previous = { pid: record.pid, startedAt: record.startedAt };
    if (readText(file) === found) unlinkIfPresent(file);
  }
  const record = parse(readText(file) ?? '');
  throw record ? new DataDirInUseError(dataDir, record.pid, record.startedAt) : new Error(`could not claim ${file}`);
}

/**
 * Creates `file` holding `text` unless it exists; false if it does. Written beside it first and
 * then linked, so that no other start ever reads it empty.
 */
function createWith(file: string, text: string): boolean {
  const draft = `${file}.${process.pid}.new`;
  writeFileSync(draft, text, { mode: 0o644 });
  try {
    linkSync(draft, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    unlinkSync(draft);
  }
}

function holdsLock(record: LockRecord): boolean {
  if (!isRunning(record.pid)) return false;
  const now = processStartTime(record.pid);
  if (record.startTime !== undefined && now !== undefined) return now === record.startTime;
  // Without start times, a lock naming this process's pid is from an earlier process that had it.
  return record.pid !== process.pid;
}

function parse(text: string): LockRecord | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockRecord>;
    return Number.isInteger(value.pid) && (value.pid as number) > 0 ? (value as LockRecord) : undefined;
  } catch {
    return undefined; // unreadable (e.g. cut short by a full disk): stale
  }
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function releaseIfOwn(file: string, text: string): void {
  if (readText(file) === text) unlinkIfPresent(file);
}

function unlinkIfPresent(file: string): void {
  try {
    unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
