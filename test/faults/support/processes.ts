import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join, resolve } from 'node:path';

/** The repository root (this file is test/faults/support/processes.ts). */
export const REPO_ROOT = resolve(__dirname, '../../..');

/** Lines of output kept in memory per process, for failure messages. */
const TAIL_LINES = 200;

/**
 * Node processes still running when the test process ends are killed, so none outlives its run: on
 * exit, and on SIGINT/SIGTERM (after which the signal takes its usual course).
 */
const running = new Set<ChildProcess>();
const killRunning = () => {
  for (const child of running) child.kill('SIGKILL');
};
process.once('exit', killRunning);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killRunning();
    process.kill(process.pid, signal);
  });
}

/**
 * One built entry point (`services/<ctx>/dist/main.js`, a migration) run as its own Node process,
 * as a pod runs it: its environment, its output in `<logDir>/<name>.log` and in a short tail.
 * `start` after `kill` or `stop` runs it again with the same environment (a restarted pod).
 */
export class NodeProcess {
  private child?: ChildProcess;
  private readonly tail: string[] = [];
  private log?: WriteStream;

  constructor(
    readonly name: string,
    private readonly script: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly logDir: string,
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The last lines it printed. */
  output(): string {
    return this.tail.join('\n');
  }

  start(): void {
    if (this.child) throw new Error(`${this.name} is already running`);
    this.log ??= createWriteStream(join(this.logDir, `${this.name}.log`), { flags: 'a' });
    const child = spawn(process.execPath, [resolve(REPO_ROOT, this.script)], {
      cwd: REPO_ROOT,
      env: this.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    running.add(child);
    // Each line with the time it arrived, to set beside the load's samples.
    const take = (chunk: Buffer) => {
      const at = new Date().toISOString().slice(11, 23);
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line === '') continue;
        this.log?.write(`${at} ${line}\n`);
        this.tail.push(line);
        if (this.tail.length > TAIL_LINES) this.tail.shift();
      }
    };
    child.stdout?.on('data', take);
    child.stderr?.on('data', take);
    child.once('exit', (code, signal) => {
      running.delete(child);
      this.tail.push(`[exited: ${signal ?? code}]`);
      this.log?.write(`${new Date().toISOString().slice(11, 23)} [exited: ${signal ?? code}]\n`);
      if (this.child === child) this.child = undefined;
    });
  }

  /** Runs it to its end (a migration); fails with its output unless it exits 0. */
  async runToEnd(): Promise<void> {
    this.start();
    const child = this.child!;
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    if (code !== 0) throw new Error(`${this.name} exited ${code}:\n${this.output()}`);
  }

  /** SIGKILL, as the OOM killer or a node failure ends a pod. */
  kill(): Promise<void> {
    return this.end('SIGKILL');
  }

  /** SIGTERM (a drain), as Kubernetes stops a pod. */
  stop(): Promise<void> {
    return this.end('SIGTERM');
  }

  private async end(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill(signal);
    await exited;
  }

  async close(): Promise<void> {
    await this.stop();
    await new Promise<void>((r) => (this.log ? this.log.end(() => r()) : r()));
  }
}
