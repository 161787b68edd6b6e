import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clearStalePostmaster, postmasterPid, stopPostmaster } from './postmaster.js';
import { isRunning } from './process-info.js';

// Stand-ins for a postmaster: processes whose working directory is the cluster directory (as a
// postmaster's is), some of which ignore the gentler signals.
describe('postmaster.pid handling before an embedded start', () => {
  let root: string;
  let cluster: string;
  const children: ChildProcess[] = [];
  const logs: string[] = [];
  const log = (m: string) => logs.push(m);
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ziti-postmaster-'));
    cluster = join(root, 'postgres');
    mkdirSync(cluster);
    logs.length = 0;
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));
  afterAll(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  /** A process in `cwd` that ignores the listed signals; resolves once its handlers are set. */
  async function fakePostmaster(cwd: string, ignores: NodeJS.Signals[] = []): Promise<ChildProcess> {
    const code = `for (const s of ${JSON.stringify(ignores)}) process.on(s, () => {}); setInterval(() => {}, 1000); console.log('ready');`;
    const child = spawn(process.execPath, ['-e', code], { cwd, stdio: ['ignore', 'pipe', 'ignore'] });
    children.push(child);
    await new Promise((resolve) => child.stdout?.once('data', resolve));
    return child;
  }
  const exited = (child: ChildProcess) =>
    child.exitCode !== null || child.signalCode !== null ? Promise.resolve(child.signalCode) : new Promise((r) => child.once('exit', (_c, s) => r(s)));
  const writePidFile = (pid: number) => writeFileSync(join(cluster, 'postmaster.pid'), `${pid}\n${cluster}\n1700000000\n5432\n\n127.0.0.1\n  1234  5678\nready   \n`);

  it('reads the pid of postmaster.pid', () => {
    expect(postmasterPid(cluster)).toBeUndefined();
    writePidFile(4321);
    expect(postmasterPid(cluster)).toBe(4321);
  });

  it('leaves a postmaster.pid of a process that is gone to PostgreSQL', async () => {
    const gone = spawn('true', [], { stdio: 'ignore' });
    await exited(gone);
    writePidFile(gone.pid as number);
    await clearStalePostmaster(cluster, undefined, log);
    expect(postmasterPid(cluster)).toBe(gone.pid);
    expect(logs.join('\n')).toContain('which is gone: PostgreSQL replaces it');
  });

  it('removes a postmaster.pid whose pid is a running process of another directory, and leaves that process alone', async () => {
    const other = await fakePostmaster(root);
    writePidFile(other.pid as number);
    await clearStalePostmaster(cluster, { pid: 1 }, log);
    expect(existsSync(join(cluster, 'postmaster.pid'))).toBe(false);
    expect(isRunning(other.pid as number)).toBe(true);
  });

  it('refuses to start beside a running postmaster of the cluster when no controller held the directory', async () => {
    const running = await fakePostmaster(cluster);
    writePidFile(running.pid as number);
    await expect(clearStalePostmaster(cluster, undefined, log)).rejects.toThrow(
      `PostgreSQL (pid ${running.pid}) is already running on ${cluster}, and no controller holds its data directory`,
    );
    expect(isRunning(running.pid as number)).toBe(true);
  });

  it('stops the postmaster a controller that has ended left running, with a fast shutdown (SIGINT)', async () => {
    const orphan = await fakePostmaster(cluster);
    writePidFile(orphan.pid as number);
    await clearStalePostmaster(cluster, { pid: 99999999, startedAt: '2026-01-02T03:04:05.000Z' }, log);
    expect(await exited(orphan)).toBe('SIGINT');
    expect(logs.join('\n')).toContain(`left behind by the controller process 99999999 (started 2026-01-02T03:04:05.000Z), which has ended: stopping it`);
  });

  it('escalates to an immediate shutdown (SIGQUIT) and then SIGKILL when the postmaster does not stop', async () => {
    const quits = await fakePostmaster(cluster, ['SIGINT']);
    await stopPostmaster(quits.pid as number, cluster, log, { fastMs: 200 });
    expect(await exited(quits)).toBe('SIGQUIT');

    const stubborn = await fakePostmaster(cluster, ['SIGINT', 'SIGQUIT']);
    await stopPostmaster(stubborn.pid as number, cluster, log, { fastMs: 200, immediateMs: 200 });
    expect(await exited(stubborn)).toBe('SIGKILL');
    expect(logs.filter((m) => m.includes(`pid ${stubborn.pid}`)).map((m) => m.split(': ').pop())).toEqual(['fast shutdown', 'immediate shutdown', 'SIGKILL']);
  });

  it('does not signal a pid that belongs to a process of another directory', async () => {
    const other = await fakePostmaster(root);
    await stopPostmaster(other.pid as number, cluster, log, { fastMs: 200, immediateMs: 200 });
    expect(isRunning(other.pid as number)).toBe(true);
    expect(logs).toEqual([]);
  });
});
