import { readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';

/** CPU time of some processes and of the whole machine at one instant (Linux /proc; clock ticks). */
export interface CpuSample {
  at: number;
  ticks: Map<string, number>;
  machineBusy: number;
  machineTotal: number;
}

const TICKS_PER_SECOND = 100;

/** The servers whose processes are summed by name (PostgreSQL's backends: every database's, other users' too). */
const SERVERS = ['postgres', 'nats-server', 'redis-server'];

/** A process's command name and CPU ticks (utime + stime, the 14th and 15th fields of its stat line). */
function stat(pid: number | string): { comm: string; ticks: number } | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = line.slice(line.lastIndexOf(') ') + 2).split(' ');
    return { comm: line.slice(line.indexOf('(') + 1, line.lastIndexOf(')')), ticks: Number(rest[11]) + Number(rest[12]) };
  } catch {
    return undefined;
  }
}

function serverTicks(): Map<string, number> {
  const out = new Map<string, number>(SERVERS.map((s) => [s, 0]));
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = stat(entry);
    if (s && out.has(s.comm)) out.set(s.comm, out.get(s.comm)! + s.ticks);
  }
  return out;
}

function machineTicks(): { busy: number; total: number } {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const total = cpu.reduce((a, b) => a + b, 0);
    const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return { busy: NaN, total: NaN };
  }
}

export function sampleCpu(pids: Record<string, number | undefined>): CpuSample {
  const ticks = new Map<string, number>();
  for (const [name, pid] of Object.entries(pids)) if (pid) ticks.set(name, stat(pid)?.ticks ?? NaN);
  for (const [name, t] of serverTicks()) ticks.set(name, t);
  const m = machineTicks();
  return { at: performance.now(), ticks, machineBusy: m.busy, machineTotal: m.total };
}

/** Cores each process (or server) used between two samples, and how busy the machine was (all its processes). */
export function cpuBetween(a: CpuSample, b: CpuSample): string {
  const seconds = (b.at - a.at) / 1000;
  const parts = [...b.ticks].map(([name, t]) => `${name} ${((t - (a.ticks.get(name) ?? NaN)) / TICKS_PER_SECOND / seconds).toFixed(2)}`);
  const busy = (b.machineBusy - a.machineBusy) / (b.machineTotal - a.machineTotal);
  return `cores used: ${parts.join(', ')}; machine ${(busy * 100).toFixed(0)} % busy of ${os.cpus().length} cores`;
}

/** The 1-minute load average, for the figures' context. */
export const load1 = (): string => os.loadavg()[0]!.toFixed(2);
