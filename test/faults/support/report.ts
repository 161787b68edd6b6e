import type { Sample } from './load.js';

/** Consecutive 2xx answers that count as "recovered". */
export const RECOVERY_RUN = 10;

/** One fault's span on the load's time axis (ms). */
export interface FaultWindow {
  name: string;
  /** When the fault began. */
  start: number;
  /** When the dependency (or process) was back: recovery is measured from here. */
  back: number;
  /** End of the window observed after it. */
  end: number;
  /** The gateway this fault killed: connection failures to it are the load balancer's business. */
  killedGateway?: string;
}

export interface WindowStats {
  fault: string;
  requests: number;
  ok: number;
  /** Clean 503 `SERVICE_UNAVAILABLE` answers. */
  unavailable: number;
  /** Other outcomes: `<status> <code>` (status 0: no HTTP answer), with counts. */
  others: Record<string, number>;
  hangs: number;
  /** Connection failures to the killed gateway, left out of every other figure. */
  excluded: number;
  maxLatencyMs: number;
  /** The worst event-loop delay of the load's process in the window. */
  loadLagMs: number;
  /** From `back` to the start of the first run of {@link RECOVERY_RUN} consecutive 2xx; undefined: none. */
  recoveryMs?: number;
  /** Answers that are neither 2xx nor a clean 503 (hangs included), in time order. */
  offending: Sample[];
  /** Filled in by the test: acknowledged writes of the window not found afterwards, and the event probe. */
  lostWrites?: number;
  event?: string;
}

const is2xx = (s: Sample) => s.status >= 200 && s.status < 300;

export function windowStats(samples: Sample[], w: FaultWindow, loopDelays: { t: number; ms: number }[] = []): WindowStats {
  const inWindow = samples.filter((s) => s.t0 >= w.start && s.t0 < w.end).sort((a, b) => a.t0 - b.t0);
  const excludedOf = (s: Sample) => !!w.killedGateway && s.gateway === w.killedGateway && s.status === 0 && s.code !== 'TIMEOUT';
  const counted = inWindow.filter((s) => !excludedOf(s));
  const hang = (s: Sample) => s.status === 0 && s.code === 'TIMEOUT';
  const cleanUnavailable = (s: Sample) => s.status === 503 && s.code === 'SERVICE_UNAVAILABLE' && !s.unclean;
  const stats: WindowStats = {
    fault: w.name,
    requests: counted.length,
    ok: counted.filter(is2xx).length,
    unavailable: counted.filter(cleanUnavailable).length,
    others: {},
    hangs: counted.filter(hang).length,
    excluded: inWindow.length - counted.length,
    maxLatencyMs: counted.reduce((m, s) => Math.max(m, s.latencyMs), 0),
    loadLagMs: loopDelays.filter((d) => d.t >= w.start && d.t < w.end).reduce((m, d) => Math.max(m, d.ms), 0),
    offending: counted.filter((s) => !is2xx(s) && !cleanUnavailable(s)),
  };
  for (const s of stats.offending) {
    if (hang(s)) continue;
    const key = `${s.status} ${s.code ?? ''}${s.status === 503 && s.unclean ? ' (unclean)' : ''}`.trim();
    stats.others[key] = (stats.others[key] ?? 0) + 1;
  }
  let run = 0;
  for (const s of counted.filter((x) => x.t0 >= w.back)) {
    run = is2xx(s) ? run + 1 : 0;
    if (run === 1) stats.recoveryMs = s.t0 - w.back;
    if (run === RECOVERY_RUN) break;
  }
  if (run < RECOVERY_RUN) stats.recoveryMs = undefined;
  return stats;
}

const seconds = (ms: number | undefined) => (ms === undefined ? 'none' : `${(ms / 1000).toFixed(1)} s`);

/** The results as a Markdown table (what the README quotes). */
export function table(rows: WindowStats[]): string {
  const head = '| fault | requests | 2xx | 503 SERVICE_UNAVAILABLE | other statuses | hangs | max latency | load lag | recovery | acked writes lost | event after the fault |';
  const lines = rows.map((r) => {
    const others = Object.entries(r.others).map(([k, n]) => `${k}: ${n}`).join(', ') || '-';
    const excluded = r.excluded > 0 ? ` (+${r.excluded} to the killed gateway)` : '';
    return `| ${r.fault} | ${r.requests}${excluded} | ${r.ok} | ${r.unavailable} | ${others} | ${r.hangs} | ${r.maxLatencyMs} ms | ${r.loadLagMs} ms | ${seconds(r.recoveryMs)} | ${r.lostWrites ?? '-'} | ${r.event ?? '-'} |`;
  });
  return [head, '|---|---|---|---|---|---|---|---|---|---|---|', ...lines].join('\n');
}

/** The first few offending answers of a window, one line each. */
export function offenders(r: WindowStats, limit = 5): string {
  return r.offending
    .slice(0, limit)
    .map((s) => `  t=${(s.t0 / 1000).toFixed(1)}s ${s.kind} via ${s.gateway}: ${s.status || s.code} ${s.latencyMs} ms${s.unclean ? ` (unclean 503: ${s.unclean})` : ''} ${s.body ?? ''}`)
    .join('\n');
}
