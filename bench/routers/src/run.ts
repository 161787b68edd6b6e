import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { writeInternalPki } from '@ziti/service-kit';
import { type OwnServer, createTestDatabase, startOwnNats, startOwnRedis, testInfra } from '@ziti/test-kit';
import { Api } from '../../common/src/api.js';
import { echoBulk, echoChannel, echoPhase } from '../../common/src/ceiling.js';
import { type Child, type ControllerInfo, child } from '../../common/src/child.js';
import { type Phase, fmt, percentile, rate } from '../../common/src/load.js';
import { renew } from '../../common/src/rdm.js';
import { cpuBetween, load1, sampleCpu } from './cpu.js';
import { type RouterNet, buildNetwork, forget, moveRouters } from './network.js';
import { changesToAll, circuitsAtRate, circuitsClosed, fullSync, hubRoutes } from './phases.js';
import { type Replica, startFabricReplica } from './replica.js';

/**
 * `npm run bench:routers`: the router control plane with many routers, through router doubles
 * (test/support/router-double.ts), on the all-in-one controller (`startController`, in a child
 * process) with the local PostgreSQL (DATABASE_URL; a fresh database) and a NATS and Redis of its
 * own (so that a second fabric replica, a standalone process configured by its environment, uses
 * the same stream and keys). BENCH_ROUTERS (100) edge routers are created and enrolled through the
 * management API and connected as doubles; they form a star (router 0 the hub, every other router
 * linked to it) and each hosts BENCH_TERMINATORS (100) terminators of a service of its own. It
 * prints:
 *  1. the full data model to every router: from all of them subscribing afresh (index 0) at once to
 *     the last DataState, and the bytes (three times, the median counts); next to it, the time the
 *     same bytes take through one TLS channel to an echo process;
 *  2. circuits across two hops (spoke i dials the service of spoke j: i → hub → j), each torn down
 *     by an ingress Fault: at BENCH_RATE (500) a second offered for BENCH_SECONDS (10) (open loop;
 *     the latency from when each was due), then as many as come with BENCH_CONCURRENCY (64) in
 *     flight (closed loop), after BENCH_WARMUP_SECONDS (5); the ceiling is a bare channel's round
 *     trips a second to the echo process (before and after);
 *  3. the delay from a committed change (a service created, a service policy PATCHed;
 *     BENCH_CHANGES, 30) to the last router holding its ChangeSet;
 *  4. with BENCH_REPLICAS=2 (default): a second fabric replica started, the odd routers moved to it
 *     (as a balancer spreads connections), the closed loop again: its circuits a second against (3)'s.
 */
const env = process.env;
const ROUTERS = Number(env.BENCH_ROUTERS || 100);
const TERMINATORS = Number(env.BENCH_TERMINATORS || 100);
const RATE = Number(env.BENCH_RATE || 500);
const SECONDS = Number(env.BENCH_SECONDS || 10);
const WARMUP_S = Number(env.BENCH_WARMUP_SECONDS ?? 5);
const CONCURRENCY = Number(env.BENCH_CONCURRENCY || 64);
const CHANGES = Number(env.BENCH_CHANGES || 30);
const REPLICAS = Number(env.BENCH_REPLICAS || 2);
const SETUP_CONCURRENCY = Number(env.BENCH_SETUP_CONCURRENCY || 8);
/** BENCH_LOGS=1: the controller's and the second replica's logs are kept (in the run's directory, named at the end). */
const KEEP_LOGS = env.BENCH_LOGS === '1';
/** BENCH_PROFILE_DIR: the controller and the second replica write CPU profiles (`--cpu-prof`) there. */
const PROFILE = env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(env.BENCH_PROFILE_DIR)}`] : [];
const GOALS = { fullSyncMs: 5_000, circuitP99Ms: 50, changeP99Ms: 1_000, replicaRatio: 1.6, replicaCores: 4 };

const log = (m: string) => console.log(`[bench] ${m}`);
const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
const n0 = (x: number) => Math.round(x).toLocaleString('en-US');

async function main(): Promise<void> {
  const infra = await testInfra();
  const db = await createTestDatabase(infra.databaseUrl, 'bench');
  const own: OwnServer[] = [];
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ziti-bench-routers-'));
  await chmod(dir, 0o755);
  let ctl: Child<ControllerInfo> | undefined;
  let echo: Child<{ port: number }> | undefined;
  let replica: Replica | undefined;
  let api: Api | undefined;
  let net: RouterNet | undefined;
  let renewal: NodeJS.Timeout | undefined;
  let finished = false;
  try {
    const [nats, redis] = await Promise.all([startOwnNats(), startOwnRedis()]);
    own.push(nats, redis);
    const tlsDir = path.join(dir, 'internal-tls');
    const internalTls = writeInternalPki(tlsDir);
    const internalSecret = randomBytes(32).toString('hex');
    const instanceId = 'bench-routers';
    const adminPassword = `Bench!${randomBytes(12).toString('base64url')}1`;
    ctl = await child<ControllerInfo>('controller-child.js', {
      dataDir: path.join(dir, 'controller'), databaseUrl: db.url, natsUrl: nats.url, redisUrl: redis.url, listenHost: '127.0.0.1', port: 0, routerCtrlPort: 0,
      servicePorts: 'ephemeral', adminUsername: 'admin', adminPassword, events: null, internalSecret, instanceId, internalTlsDir: tlsDir,
      ...(KEEP_LOGS ? { logFile: path.join(dir, 'controller.log') } : {}),
    }, PROFILE);
    api = new Api(ctl.info.url, ctl.info.caCertPem, 32);
    api.token = await api.login('admin', adminPassword, 'management');
    const tag = `bench-${randomBytes(4).toString('hex')}`;
    log(`${os.cpus().length} CPU(s), load ${load1()}; building ${ROUTERS} routers with ${TERMINATORS} terminators each`);
    net = await buildNetwork(api, ctl.info.routerCtrlPort, tag, { routers: ROUTERS, terminatorsPerRouter: TERMINATORS, concurrency: SETUP_CONCURRENCY }, log);
    const doubles = () => net!.doubles;
    renewal = setInterval(() => void Promise.all(doubles().map((d) => renew(d).catch(() => undefined))), 60_000);
    const lines: string[] = [];
    const out = (m: string) => {
      lines.push(m);
      log(m);
    };
    const pids = () => ({ controller: ctl?.proc.pid, 'second replica': replica?.pid, benchmark: process.pid });

    // 1. The full data model to every router.
    echo = await child<{ port: number }>('echo-child.js', { keyPem: net.routers[0]!.keyPem, certPem: net.routers[0]!.serverCertPem, caPem: net.routers[0]!.caPem });
    const echoCh = await echoChannel(echo.info.port, net.routers[0]!);
    forget(doubles());
    const syncs = [];
    for (let k = 0; k < 3; k++) {
      syncs.push(await fullSync(net));
      await new Promise((r) => setTimeout(r, 1_000));
    }
    const syncMs = syncs.map((s) => s.ms);
    const sync = syncs[syncMs.indexOf([...syncMs].sort((a, b) => a - b)[1]!)]!;
    const bulkMs = await echoBulk(echoCh, ROUTERS, sync.bytesEach);
    out(`full data model to ${ROUTERS} routers at once: median ${sync.ms.toFixed(0)} ms (${syncMs.map((x) => x.toFixed(0)).join(', ')}; per router p50 ${percentile(sync.perRouterMs, 50).toFixed(0)} ms), ` +
      `${n0(sync.bytes)} bytes in all (${n0(sync.bytesEach)} each, ${sync.events} events) (goal < ${GOALS.fullSyncMs / 1000} s: ${met(sync.ms < GOALS.fullSyncMs)}); ` +
      `the same bytes through one TLS channel to the echo process: ${bulkMs.toFixed(0)} ms, ratio ceiling/sync ${(bulkMs / sync.ms).toFixed(3)}; load ${load1()}`);

    // 2. Circuits across two hops: at the offered rate, then closed loop; the channel ceiling around them.
    const errors: string[] = [];
    await echoPhase(echoCh, 2_000, CONCURRENCY);
    await circuitsClosed(net, WARMUP_S * 1000, CONCURRENCY, [], 1);
    const before = await echoPhase(echoCh, SECONDS * 1000, CONCURRENCY);
    forget(doubles());
    const atRate = await circuitsAtRate(net, SECONDS * 1000, RATE, errors);
    const hubAtRate = hubRoutes(net);
    const p99AtRate = percentile(atRate.latenciesMs, 99);
    out(`circuits across two hops at ${RATE}/s offered for ${SECONDS} s (open loop): ${atRate.count} ok, ${atRate.errors} failed of ${atRate.issued}${errors.length ? ` (${errors.join('; ')})` : ''}, ` +
      `the last answered after ${atRate.seconds.toFixed(1)} s (${rate(atRate).toFixed(0)}/s), ` +
      `p50 ${percentile(atRate.latenciesMs, 50).toFixed(1)} ms, p99 ${p99AtRate.toFixed(1)} ms from when each was due; the hub routed ${hubAtRate} ` +
      `(goal p99 < ${GOALS.circuitP99Ms} ms at ${RATE}/s: ${met(p99AtRate < GOALS.circuitP99Ms && atRate.errors === 0 && atRate.count === atRate.issued)}); load ${load1()}`);
    forget(doubles());
    const c1 = sampleCpu(pids());
    const closedErrors: string[] = [];
    const closed = await circuitsClosed(net, SECONDS * 1000, CONCURRENCY, closedErrors);
    const c2 = sampleCpu(pids());
    const hubClosed = hubRoutes(net);
    const after = await echoPhase(echoCh, SECONDS * 1000, CONCURRENCY);
    echoCh.close('done');
    const ceiling = (rate(before) + rate(after)) / 2;
    const cps = rate(closed);
    const p = (ph: Phase, q: number) => percentile(ph.latenciesMs, q).toFixed(1);
    out(`circuits across two hops, closed loop (${CONCURRENCY} in flight, ${SECONDS} s): ${cps.toFixed(0)}/s (${closed.count} ok, ${closed.errors} failed${closedErrors.length ? `: ${closedErrors.join('; ')}` : ''}), p50 ${p(closed, 50)} ms, p99 ${p(closed, 99)} ms; ` +
      `the hub routed ${hubClosed}; ${cpuBetween(c1, c2)}; load ${load1()}`);
    out(`channel ceiling: ${ceiling.toFixed(0)} round trips/s (before ${rate(before).toFixed(0)}, after ${rate(after).toFixed(0)}); ratio circuits/ceiling ${(cps / ceiling).toFixed(3)} (closed loop), ${(rate(atRate) / ceiling).toFixed(3)} (at ${RATE}/s)`);
    if (atRate.errors + closed.errors > 0) process.exitCode = 1;

    // 3. A committed change to the last router.
    forget(doubles());
    const changes = await changesToAll(api, net, CHANGES);
    out(`change → ChangeSet at the last of ${ROUTERS} routers (${CHANGES} changes: services created, a policy PATCHed): ${fmt(changes.last)} from the API's answer ` +
      `(first router ${fmt(changes.first)}; last from the request ${fmt(changes.lastFromRequest)}) (goal p99 < ${GOALS.changeP99Ms / 1000} s: ${met(percentile(changes.last, 99) < GOALS.changeP99Ms)}); load ${load1()}`);

    // 4. Two fabric replicas against one.
    if (REPLICAS >= 2) {
      replica = await startFabricReplica({
        databaseUrl: db.url, natsUrl: nats.url, redisUrl: redis.url, internalSecret, internalTlsDir: internalTls.fabric, instanceId,
        grpc: Object.fromEntries(Object.entries(ctl.info.services).map(([k, v]) => [k, v.grpcAddress])), logFile: path.join(dir, 'fabric-2.log'), execArgv: PROFILE,
      });
      const odd = net.routers.map((_, i) => i).filter((i) => i % 2 === 1);
      await moveRouters(api, net, odd, replica.ctrlPort, log);
      const errors2: string[] = [];
      await circuitsClosed(net, WARMUP_S * 1000, CONCURRENCY, [], 2);
      forget(doubles());
      const r1 = sampleCpu(pids());
      const two = await circuitsClosed(net, SECONDS * 1000, CONCURRENCY, errors2, 3);
      const r2 = sampleCpu(pids());
      const ratio = rate(two) / cps;
      const enough = os.cpus().length >= GOALS.replicaCores;
      out(`two fabric replicas (${ROUTERS - odd.length} and ${odd.length} routers) vs one, closed loop (${CONCURRENCY} in flight, ${SECONDS} s): ${rate(two).toFixed(0)}/s ` +
        `(${two.count} ok, ${two.errors} failed${errors2.length ? `: ${errors2.join('; ')}` : ''}), p50 ${p(two, 50)} ms, p99 ${p(two, 99)} ms, against ${cps.toFixed(0)}/s: ratio ${ratio.toFixed(2)} ` +
        `(goal ≥ ${GOALS.replicaRatio} with ${GOALS.replicaCores}+ cores: ${enough ? met(ratio >= GOALS.replicaRatio) : `not a goal on ${os.cpus().length} cores`}); ${cpuBetween(r1, r2)}; load ${load1()}`);
      if (two.errors > 0) process.exitCode = 1;
    } else {
      out('two fabric replicas vs one: left out (BENCH_REPLICAS=1)');
    }
    finished = true;
    console.log(`\nRouter control plane with ${ROUTERS} routers (${os.cpus().length} CPUs, load ${load1()} at the end; PostgreSQL, own NATS and Redis)\n${lines.map((l) => `- ${l}`).join('\n')}`);
  } finally {
    if (renewal) clearInterval(renewal);
    await Promise.all((net?.doubles ?? []).map((d) => d?.close().catch(() => undefined)));
    await echo?.stop();
    await replica?.stop();
    api?.close();
    await ctl?.stop();
    await db.drop().catch(() => undefined);
    for (const s of own) await s.close().catch(() => undefined);
    if (finished && !KEEP_LOGS) await rm(dir, { recursive: true, force: true });
    else console.error(`[bench] kept ${dir} (controller.log with BENCH_LOGS=1; fabric-2.log, the second replica's, if it ran)`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
