import { type ChildProcess, fork } from 'node:child_process';
import path from 'node:path';

export interface Child<T> {
  proc: ChildProcess;
  /** The child's first IPC message. */
  info: T;
  /** Sends `stop` and resolves when it exited. */
  stop(): Promise<void>;
}

/**
 * Forks one of this folder's child scripts (`controller-child.js`, `echo-child.js`) with `arg` as
 * JSON (and Node options such as `--cpu-prof`); resolves with its first message.
 */
export function child<T>(file: string, arg: unknown, execArgv: string[] = []): Promise<Child<T>> {
  const proc = fork(path.join(__dirname, file), [JSON.stringify(arg)], { execArgv: [...process.execArgv, ...execArgv] });
  return new Promise((resolve, reject) => {
    proc.once('message', (info) =>
      resolve({
        proc,
        info: info as T,
        stop: () => new Promise<void>((done) => {
          if (proc.exitCode !== null) return done();
          proc.once('exit', () => done());
          proc.send('stop');
        }),
      }),
    );
    proc.once('exit', (code) => reject(new Error(`${file} exited (${code})`)));
  });
}

/** What `controller-child.js` answers. */
export interface ControllerInfo {
  url: string;
  caCertPem: string;
  routerCtrlPort: number;
  services: Record<string, { httpUrl: string; grpcAddress: string }>;
}
