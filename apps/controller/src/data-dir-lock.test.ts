import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirInUseError, LOCK_FILE, lockDataDir } from './data-dir-lock.js';
import { processStartTime } from './process-info.js';

describe('data directory lock', () => {
  let dir: string;
  const children: ChildProcess[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ziti-lock-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  afterAll(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  const sleeper = () => {
    const child = spawn('sleep', ['600'], { stdio: 'ignore' });
    children.push(child);
    return child.pid as number;
  };
  const endedPid = async () => {
    const child = spawn('true', [], { stdio: 'ignore' });
    await new Promise((resolve) => child.once('exit', resolve));
    return child.pid as number;
  };
  const lockFile = () => join(dir, LOCK_FILE);
  const writeLock = (record: object) => writeFileSync(lockFile(), JSON.stringify(record));

  it('is created for this process and removed on release', () => {
    const lock = lockDataDir(dir);
    expect(JSON.parse(readFileSync(lockFile(), 'utf8'))).toEqual(expect.objectContaining({ pid: process.pid, startTime: processStartTime(process.pid) }));
    expect(lock.previous).toBeUndefined();
    lock.release();
    expect(existsSync(lockFile())).toBe(false);
  });

  it('is refused while the process it names runs, naming that process and the directory, and the lock stays as it was', () => {
    const pid = sleeper();
    writeLock({ pid, startTime: processStartTime(pid), startedAt: '2026-01-02T03:04:05.000Z' });
    const before = readFileSync(lockFile(), 'utf8');
    let error: unknown;
    try {
      lockDataDir(dir);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(DataDirInUseError);
    expect((error as Error).message).toContain(`the data directory ${dir} is in use by the controller process ${pid} (started 2026-01-02T03:04:05.000Z)`);
    expect(readFileSync(lockFile(), 'utf8')).toBe(before);
  });

  it('is taken over from a process that has ended, which it reports as the previous controller', async () => {
    const pid = await endedPid();
    writeLock({ pid, startedAt: '2026-01-02T03:04:05.000Z' });
    const lock = lockDataDir(dir);
    expect(lock.previous).toEqual({ pid, startedAt: '2026-01-02T03:04:05.000Z' });
    expect(JSON.parse(readFileSync(lockFile(), 'utf8')).pid).toBe(process.pid);
    lock.release();
  });

  it('is taken over when its pid now belongs to a process started later (the start time differs)', () => {
    const pid = sleeper();
    writeLock({ pid, startTime: `${processStartTime(pid)}0`, startedAt: '2026-01-02T03:04:05.000Z' });
    const lock = lockDataDir(dir);
    expect(lock.previous?.pid).toBe(pid);
    lock.release();
  });

  it('is taken over when unreadable (cut short), without a previous controller', () => {
    writeFileSync(lockFile(), '{"pid":');
    const lock = lockDataDir(dir);
    expect(lock.previous).toBeUndefined();
    expect(JSON.parse(readFileSync(lockFile(), 'utf8')).pid).toBe(process.pid);
    lock.release();
  });

  it('refuses a second claim by the same process while the first holds it', () => {
    const lock = lockDataDir(dir);
    expect(() => lockDataDir(dir)).toThrow(DataDirInUseError);
    lock.release();
  });

  it('is not removed on release once another process has claimed the file', () => {
    const lock = lockDataDir(dir);
    writeLock({ pid: 1, startedAt: 'later' });
    lock.release();
    expect(JSON.parse(readFileSync(lockFile(), 'utf8')).pid).toBe(1);
  });
});
