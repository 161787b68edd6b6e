import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { userIds } from './reachable.js';
import {
  api,
  cleanUp,
  exitOf,
  gone,
  identityNames,
  login,
  makeDataDir,
  postmasterPidOf,
  reaped,
  spawnControllerProcess,
  startControllerProcess,
  track,
  waitFor,
  type StartedController,
} from './testing/controller-process.js';

// The built controller (`node dist/main.js`, embedded PostgreSQL) as a child process, killed and
// started again on one data directory. The steps run in order, each from where the last left it.
jest.setTimeout(180_000);

const IDENTITY = 'made-before-the-kill';

describe('embedded start: crashes, orphans and a second start on one data directory', () => {
  let dir: string;
  let clusterDir: string;
  let running: StartedController | undefined;
  let pidFileOfRunning = '';
  beforeAll(() => {
    dir = makeDataDir();
    clusterDir = join(dir, 'postgres');
  });
  afterAll(cleanUp);

  async function assertDataSurvived(ctl: StartedController): Promise<void> {
    const token = await login(ctl.port);
    expect(await identityNames(ctl.port, token, IDENTITY)).toEqual([IDENTITY]);
  }

  it('stops PostgreSQL when the controller is killed (SIGKILL), and the next start has the data', async () => {
    const first = await startControllerProcess(dir);
    const token = await login(first.port);
    const created = await api(first.port, 'POST', '/edge/management/v1/identities', { token, body: { name: IDENTITY, type: 'Device', isAdmin: false } });
    expect(created.status).toBe(201);
    const postmaster = postmasterPidOf(dir) as number;
    expect(gone(postmaster)).toBe(false);

    first.child.kill('SIGKILL');
    await exitOf(first, 10_000);
    await waitFor(() => gone(postmaster), 60_000, 'PostgreSQL to stop after its controller was killed');
    await waitFor(() => gone(first.watchdogPid), 10_000, 'the watchdog to exit');
    expect(existsSync(join(clusterDir, 'postmaster.pid'))).toBe(false); // a clean (fast) shutdown removes it

    running = await startControllerProcess(dir);
    expect(running.output()).not.toContain('left behind by the controller process');
    await assertDataSurvived(running);
  });

  it('stops, at the next start, a PostgreSQL left running when the controller and its watchdog were killed together', async () => {
    const previous = running as StartedController;
    const orphan = postmasterPidOf(dir) as number;
    // The watchdog first: killed second, it might see its controller go and start the shutdown.
    process.kill(previous.watchdogPid, 'SIGKILL');
    previous.child.kill('SIGKILL');
    await exitOf(previous, 10_000);
    await waitFor(() => gone(previous.watchdogPid), 10_000, 'the watchdog to die');
    expect(gone(orphan)).toBe(false); // nobody stopped it

    running = await startControllerProcess(dir);
    expect(running.output()).toContain(`PostgreSQL (pid ${orphan}) is still running on ${clusterDir}, left behind by the controller process ${previous.pid}`);
    expect(gone(orphan)).toBe(true);
    expect(postmasterPidOf(dir)).not.toBe(orphan);
    await assertDataSurvived(running);
  });

  it('refuses a second start on the same data directory, naming the running controller, and leaves that one alone', async () => {
    const first = running as StartedController;
    const postmaster = postmasterPidOf(dir) as number;
    const lock = readFileSync(join(dir, 'controller.lock'), 'utf8');

    const second = spawnControllerProcess(dir);
    const { code } = await exitOf(second, 30_000);
    expect(code).not.toBe(0);
    expect(second.output()).toContain(`the data directory ${dir} is in use by the controller process ${first.pid}`);

    expect(readFileSync(join(dir, 'controller.lock'), 'utf8')).toBe(lock);
    expect(postmasterPidOf(dir)).toBe(postmaster);
    expect(gone(postmaster)).toBe(false);
    expect((await api(first.port, 'GET', '/edge/client/v1/version')).status).toBe(200);
    await assertDataSurvived(first);
  });

  it('stops PostgreSQL and the watchdog on SIGTERM and releases the data directory', async () => {
    const ctl = running as StartedController;
    const postmaster = postmasterPidOf(dir) as number;
    pidFileOfRunning = readFileSync(join(clusterDir, 'postmaster.pid'), 'utf8');
    ctl.child.kill('SIGTERM');
    expect((await exitOf(ctl, 60_000)).code).toBe(0);
    running = undefined;
    await waitFor(() => gone(postmaster) && gone(ctl.watchdogPid), 10_000, 'PostgreSQL and the watchdog to be gone');
    expect(existsSync(join(dir, 'controller.lock'))).toBe(false);
    expect(existsSync(join(clusterDir, 'postmaster.pid'))).toBe(false);
  });

  it('starts over the postmaster.pid of a PostgreSQL that was killed too, which PostgreSQL replaces itself', async () => {
    const ctl = await startControllerProcess(dir);
    const postmaster = postmasterPidOf(dir) as number;
    for (const pid of [ctl.watchdogPid, postmaster, ctl.pid]) process.kill(pid, 'SIGKILL');
    await exitOf(ctl, 10_000);
    // Reaped, not only exited: a zombie still answers signal 0, and PostgreSQL would take it for a running server.
    await waitFor(() => reaped(postmaster) && gone(ctl.watchdogPid), 30_000, 'the killed PostgreSQL to be reaped');
    expect(postmasterPidOf(dir)).toBe(postmaster);

    running = await startControllerProcess(dir);
    expect(running.output()).toContain(`names pid ${postmaster}, which is gone: PostgreSQL replaces it`);
    await assertDataSurvived(running);
  });

  it('removes a postmaster.pid whose pid now belongs to another process (which PostgreSQL would take for a running server)', async () => {
    const ctl = running as StartedController;
    ctl.child.kill('SIGTERM');
    expect((await exitOf(ctl, 60_000)).code).toBe(0);
    running = undefined;
    // Another process with the pid (as the PostgreSQL user when root, as PostgreSQL would see it).
    const owner = process.getuid?.() === 0 ? userIds(readFileSync('/etc/passwd', 'utf8'), 'postgres') : undefined;
    const other = spawn('sleep', ['600'], { stdio: 'ignore', ...(owner ?? {}) });
    track(other.pid as number);
    const lines = pidFileOfRunning.split('\n');
    lines[0] = String(other.pid);
    writeFileSync(join(clusterDir, 'postmaster.pid'), lines.join('\n'));

    running = await startControllerProcess(dir);
    expect(running.output()).toContain(`names pid ${other.pid}, now another process: removing the stale file`);
    expect(gone(other.pid as number)).toBe(false);
    expect(postmasterPidOf(dir)).not.toBe(other.pid);
    await assertDataSurvived(running);
  });
});
