import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Cluster, type Replica, startCluster, waitGatewayReady, waitReplicaReady } from './support/cluster.js';
import { type AckedWrite, GatewayPool, Load, REQUEST_BOUND_MS } from './support/load.js';
import { Api, buildNetwork, missingWrites, type Network, operations } from './support/network.js';
import { EventProbe } from './support/probe.js';
import { type FaultWindow, offenders, RECOVERY_RUN, table, type WindowStats, windowStats } from './support/report.js';

/**
 * Faults under load, one after another, against the controller run as separate processes (see
 * support/cluster.ts): NATS stopped 15 s, Redis restarted empty, one replica of identity-auth and of
 * session killed, the single replicas of the other contexts killed, PostgreSQL stopped 10 s, a
 * gateway killed. For each: every request answered 2xx
 * or a clean 503 `SERVICE_UNAVAILABLE` within the bound (never 500, never a hang), steady 2xx again
 * soon after the dependency returns, a policy change made during the fault reaching the other
 * contexts afterwards; and at the end, every acknowledged write is there. The table goes to the
 * output and to last-run.md, every process's output and every sample to last-run-logs/ (both beside
 * this file).
 */

/** Requests a second, over both gateways. */
const RATE = 30;
/** Load before the first fault (the baseline row). */
const BASELINE_MS = 10_000;
/** Load observed after each fault's dependency is back. */
const AFTER_MS = 20_000;
/** Steady 2xx ({@link RECOVERY_RUN} in a row) must start within this of the dependency's return. */
const RECOVERY_BOUND_MS = 10_000;
/** A change made during a fault must show in every view within this of the dependency's return (of the change, when nothing went away). */
const EVENT_BOUND_MS = 20_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let cluster: Cluster;
let load: Load;
let api: Api;
let net: Network;
const acked: AckedWrite[] = [];
const windows: FaultWindow[] = [];
const rows: WindowStats[] = [];
const probes = new Map<string, EventProbe>();
const setupStarted = Date.now();
let setupMs = 0;

beforeAll(async () => {
  cluster = await startCluster(join(__dirname, 'last-run-logs'));
  const pool = new GatewayPool(cluster.gateways.map((g) => ({ name: g.name, url: g.url })));
  api = new Api(pool);
  net = await buildNetwork(api, cluster.admin);
  for (const name of ['nats', 'redis', 'replicas', 'singles', 'postgres', 'gateway']) probes.set(name, await EventProbe.create(api, net, name));
  load = new Load(pool, operations(net, acked), RATE);
  setupMs = Date.now() - setupStarted;
  load.start();
  await sleep(BASELINE_MS);
  windows.push({ name: 'baseline (no fault)', start: 0, back: 0, end: load.now() });
}, 600_000);

afterAll(async () => {
  try {
    await load?.stop();
    const report = [
      `Fault-injection run of ${new Date().toISOString()}: ${RATE} requests/s over 2 gateways, bound ${REQUEST_BOUND_MS / 1000} s,`,
      `recovery = first run of ${RECOVERY_RUN} consecutive 2xx after the dependency is back; setup took ${(setupMs / 1000).toFixed(0)} s,`,
      `the whole run ${((Date.now() - setupStarted) / 1000).toFixed(0)} s. Load t=0 at ${load ? new Date(load.started).toISOString() : '-'} (process logs and every sample: last-run-logs/).`,
      "`load lag`: the worst event-loop delay of the load's own process in the window (its latencies include it).",
      '',
      table(rows),
      '',
      ...rows.filter((r) => r.offending.length > 0).flatMap((r) => [`First offending answers, ${r.fault}:`, offenders(r), '']),
    ].join('\n');
    console.log(report);
    writeFileSync(join(__dirname, 'last-run.md'), `${report}\n`);
    if (load) writeFileSync(join(__dirname, 'last-run-logs', 'samples.json'), JSON.stringify({ windows, samples: load.samples }));
  } finally {
    await cluster?.close();
  }
}, 120_000);

/** What one fault does: `during` runs while it holds (the probe's policy change). */
interface Fault {
  name: string;
  probe: string;
  /** Applies the fault, runs `during`, lifts it; resolves when the dependency is back. */
  inject(during: (deadline: number) => Promise<void>): Promise<void>;
  /** Recovery is measured from the fault's start (a redundant part failed: nothing to come back). */
  redundant?: boolean;
  killedGateway?: string;
  /** A write can be acknowledged while it holds (false: PostgreSQL is down). */
  writesAccepted: boolean;
}

async function runFault(fault: Fault): Promise<string[]> {
  const probe = probes.get(fault.probe)!;
  await probe.arm();
  const start = load.now();
  let grant = { granted: false, status: 'not tried' };
  let grantedAt = 0;
  await fault.inject(async (deadline) => {
    grant = await probe.grant(deadline);
    grantedAt = Date.now();
  });
  const back = fault.redundant ? start : load.now();
  // Delivery counts from the dependency's return, or from the change itself when nothing went away.
  const delivery = grant.granted ? await probe.delivered(fault.redundant ? grantedAt : Date.now(), EVENT_BOUND_MS) : {};
  await sleep(Math.max(0, back + AFTER_MS - load.now()));
  const window: FaultWindow = { name: fault.name, start, back, end: load.now(), killedGateway: fault.killedGateway };
  windows.push(window);
  const stats = windowStats(load.samples, window, load.loopDelays);
  const ms = (v?: number) => (v === undefined ? `not within ${EVENT_BOUND_MS / 1000} s` : `${(v / 1000).toFixed(1)} s`);
  stats.event = grant.granted
    ? `service-updates ${ms(delivery.serviceUpdatesMs)}, list ${ms(delivery.serviceListMs)}, session ${ms(delivery.sessionMs)}`
    : `change not acknowledged (${grant.status.slice(0, 60)})`;
  rows.push(stats);

  const failures: string[] = [];
  if (stats.offending.length > 0) {
    failures.push(`${stats.offending.length} answers neither 2xx nor a clean 503 (others: ${JSON.stringify(stats.others)}, hangs: ${stats.hangs}):\n${offenders(stats)}`);
  }
  if (stats.recoveryMs === undefined || stats.recoveryMs > RECOVERY_BOUND_MS) {
    failures.push(`no ${RECOVERY_RUN} consecutive 2xx within ${RECOVERY_BOUND_MS / 1000} s of the dependency's return (recovery: ${stats.recoveryMs ?? 'none'} ms)`);
  }
  if (grant.granted && [delivery.serviceUpdatesMs, delivery.serviceListMs, delivery.sessionMs].some((v) => v === undefined)) {
    failures.push(`the policy change made during the fault did not reach every view: ${stats.event}`);
  }
  if (!grant.granted && fault.writesAccepted) failures.push(`the policy change was never acknowledged during the fault: ${grant.status}`);
  return failures;
}

const replica = (name: string): Replica => {
  const r = cluster.replicas.find((x) => x.name === name);
  if (!r) throw new Error(`no replica ${name}`);
  return r;
};

/** Holds a fault `ms` from `since` (ms epoch), running `during` meanwhile. */
async function hold(since: number, ms: number, during: (deadline: number) => Promise<void>): Promise<void> {
  await during(since + ms - 500);
  await sleep(Math.max(0, since + ms - Date.now()));
}

/** Kills the replicas (-9), holds `ms` running `during`, starts them again as Kubernetes would, and waits until they are ready. */
async function killFor(killed: Replica[], ms: number, during: (deadline: number) => Promise<void>): Promise<void> {
  await Promise.all(killed.map((r) => r.process.kill()));
  await hold(Date.now(), ms, during);
  for (const r of killed) r.process.start();
  for (const r of killed) await waitReplicaReady(r, 60_000);
}

const FAULT_TIMEOUT = 180_000;

it('baseline: the load alone is answered 2xx', () => {
  const stats = windowStats(load.samples, windows[0]!, load.loopDelays);
  rows.push(stats);
  expect({ requests: stats.requests > 0, offending: offenders(stats) }).toEqual({ requests: true, offending: '' });
});

it('NATS stopped for 15 s', async () => {
  const failures = await runFault({
    name: 'NATS stopped 15 s',
    probe: 'nats',
    writesAccepted: true,
    async inject(during) {
      await cluster.nats.stop();
      await hold(Date.now(), 15_000, during);
      await cluster.nats.start();
    },
  });
  expect(failures).toEqual([]);
}, FAULT_TIMEOUT);

it('Redis restarted empty', async () => {
  const failures = await runFault({
    name: 'Redis killed, restarted empty',
    probe: 'redis',
    writesAccepted: true,
    async inject(during) {
      await cluster.redis.kill();
      await hold(Date.now(), 3_000, during);
      await cluster.redis.start();
    },
  });
  expect(failures).toEqual([]);
}, FAULT_TIMEOUT);

it('one replica of identity-auth and of session killed (-9), restarted 5 s later', async () => {
  const killed = [replica('identity-auth-1'), replica('session-1')];
  const failures = await runFault({
    name: 'kill -9 identity-auth-1 and session-1',
    probe: 'replicas',
    writesAccepted: true,
    redundant: true,
    inject: (during) => killFor(killed, 5_000, during),
  });
  expect(failures).toEqual([]);
}, FAULT_TIMEOUT);

it('the only replica of policy, pki-enrollment and posture killed (-9), restarted 5 s later', async () => {
  const killed = [replica('policy'), replica('pki-enrollment'), replica('posture')];
  const failures = await runFault({
    name: 'kill -9 policy, pki-enrollment and posture (single replicas)',
    probe: 'singles',
    // The change goes to policy, which is down until the restart.
    writesAccepted: false,
    inject: (during) => killFor(killed, 5_000, during),
  });
  expect(failures).toEqual([]);
}, FAULT_TIMEOUT);

it('PostgreSQL stopped for 10 s', async () => {
  const failures = await runFault({
    name: 'PostgreSQL stopped 10 s',
    probe: 'postgres',
    writesAccepted: false,
    async inject(during) {
      await cluster.postgres.stop();
      await hold(Date.now(), 10_000, during);
      await cluster.postgres.start();
    },
  });
  expect(failures).toEqual([]);
}, FAULT_TIMEOUT);

it('a gateway killed (-9), its clients failing over, restarted 5 s later', async () => {
  const gw = cluster.gateways[1]!;
  const failures = await runFault({
    name: `kill -9 ${gw.name}`,
    probe: 'gateway',
    writesAccepted: true,
    redundant: true,
    killedGateway: gw.name,
    async inject(during) {
      await gw.process.kill();
      await hold(Date.now(), 5_000, during);
      gw.process.start();
      await waitGatewayReady(gw, 60_000);
    },
  });
  expect(failures).toEqual([]);
}, FAULT_TIMEOUT);

it('every acknowledged write is there afterwards', async () => {
  await load.stop();
  const missing = await missingWrites(api, net.adminToken, acked);
  for (const row of rows) {
    const w = windows.find((x) => x.name === row.fault)!;
    row.lostWrites = missing.filter((m) => m.write.t >= w.start && m.write.t < w.end).length;
  }
  const lines = missing.slice(0, 10).map((m) => `${m.write.kind} ${m.write.id} (acknowledged at t=${(m.write.t / 1000).toFixed(1)} s): ${m.status}`);
  expect({ acknowledged: acked.length > 0, missing: lines }).toEqual({ acknowledged: true, missing: [] });
}, FAULT_TIMEOUT);
