/**
 * CPU time read from Linux's /proc, to split what a benchmark phase cost per operation between
 * the controller's main thread, the load generator's thread, the rest of this process (the
 * hashing threads, V8's helpers), PostgreSQL's local processes, and the machine's idle time.
 * Far steadier from run to run than throughput on a shared machine. Everything answers undefined
 * where /proc is not there.
 */
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

/** /proc counts CPU time in ticks of USER_HZ, 100 per second on Linux. */
const TICK_MS = 10;

export interface CpuSample {
  atMs: number;
  main: number;
  load: number;
  process: number;
  postgres: Map<string, number>;
  idle: number;
}

/** CPU per operation over a phase, in ms; `idleCores` is the idle time per wall time. */
export interface CpuSplit {
  main: number;
  load: number;
  rest: number;
  postgres: number;
  idleCores: number;
}

/** user + system time of a /proc/…/stat file, in ms (0 when it is gone). */
function statMs(path: string): number {
  try {
    const text = readFileSync(path, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS; // utime, stime (fields 14 and 15)
  } catch {
    return 0;
  }
}

function postgresProcesses(): Map<string, number> {
  const out = new Map<string, number>();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') out.set(pid, statMs(`/proc/${pid}/stat`));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

function idleMs(): number {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/);
  return (Number(cpu[4]) + Number(cpu[5])) * TICK_MS; // idle, iowait
}

/** The calling thread's id (for a worker to tell the main thread which one it is). */
export function currentTid(): number | undefined {
  try {
    return Number(readlinkSync('/proc/thread-self').split('/').pop());
  } catch {
    return undefined;
  }
}

/** The CPU counters now; `loadTid` is the load generator's thread. */
export function sampleCpu(loadTid: number | undefined): CpuSample | undefined {
  try {
    return {
      atMs: performance.now(),
      main: statMs(`/proc/self/task/${process.pid}/stat`),
      load: loadTid === undefined ? 0 : statMs(`/proc/self/task/${loadTid}/stat`),
      process: statMs('/proc/self/stat'),
      postgres: postgresProcesses(),
      idle: idleMs(),
    };
  } catch {
    return undefined;
  }
}

/** CPU used over several phases (ms), with their operations and wall time. */
export interface CpuSum {
  main: number;
  load: number;
  rest: number;
  postgres: number;
  idle: number;
  ops: number;
  wallMs: number;
}

/** Adds the CPU used between `a` and `b` to `into`. */
export function addCpu(into: CpuSum, a: CpuSample, b: CpuSample, ops: number): void {
  let postgres = 0;
  for (const [pid, ms] of b.postgres) postgres += ms - (a.postgres.get(pid) ?? 0); // a backend started meanwhile counts whole
  const main = b.main - a.main;
  const load = b.load - a.load;
  into.main += main;
  into.load += load;
  into.rest += b.process - a.process - main - load;
  into.postgres += postgres;
  into.idle += b.idle - a.idle;
  into.ops += ops;
  into.wallMs += b.atMs - a.atMs;
}

export function emptyCpu(): CpuSum {
  return { main: 0, load: 0, rest: 0, postgres: 0, idle: 0, ops: 0, wallMs: 0 };
}

/** The sums as per-operation figures. */
export function perOperation(sum: CpuSum): CpuSplit {
  const per = (ms: number) => (sum.ops > 0 ? ms / sum.ops : NaN);
  return { main: per(sum.main), load: per(sum.load), rest: per(sum.rest), postgres: per(sum.postgres), idleCores: sum.idle / sum.wallMs };
}
