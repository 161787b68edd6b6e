import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase, deleteStream, testInfra } from '@ziti/test-kit';
import { Api } from '../../common/src/api.js';
import { echoChannel, echoPhase } from '../../common/src/ceiling.js';
import { type Child, type ControllerInfo, child } from '../../common/src/child.js';
import { type Phase, fmt, percentile, rate } from '../../common/src/load.js';
import { renew } from '../../common/src/rdm.js';
import { changeDelays, circuitPhase, circuitsAtRate, fullState, settle } from './measure.js';
import { populate, smallNetwork } from './net.js';

/**
 * `npm run bench:circuits`: the router control plane through a router double (test/support), on
 * the all-in-one controller (`startController`, in a child process) with the real PostgreSQL,
 * NATS and Redis (DATABASE_URL, NATS_URL, REDIS_URL; default the local servers), in a fresh
 * database and stream. It prints
 *  1. circuits per second and the p50/p99 of CreateCircuitV2 → CreateCircuitV2Response, one double
 *     hosting the terminator (Route answered with success at once) and dialing BENCH_CONCURRENCY
 *     (64) requests in flight for BENCH_SECONDS (10) after BENCH_WARMUP_SECONDS (5), each circuit
 *     torn down by an ingress Fault (BENCH_FAULT=0: kept); next to the round trips per second of a
 *     bare @ziti/channel request/reply over mutual TLS on loopback (echo process), measured before
 *     and after in the same run: circuits/s ÷ their mean is the ratio to the machine ceiling; then
 *     the same circuits offered at BENCH_RATE (1,000) a second for BENCH_SECONDS whatever is in
 *     flight (open loop), each latency from when it was due: the p99 at the goal's rate;
 *  2. the time from SubscribeToDataModel (index 0) to the DataState's arrival and its size, on the
 *     small model and on BENCH_IDENTITIES (10,000) identities, BENCH_SERVICES (2,000) services and
 *     BENCH_POLICIES (1,000) service policies populated through the management API
 *     (BENCH_POPULATE_CONCURRENCY, 16, requests in flight; timed apart), the identities by SQL into
 *     identity-auth's table and policy's projection unless BENCH_POPULATE=api;
 *  3. the delay from a committed change (a service created, a service policy's identityRoles
 *     PATCHed) to the ChangeSet carrying it at the double: BENCH_CHANGES (50), on both models.
 */
const env = process.env;
const SECONDS = Number(env.BENCH_SECONDS || 10);
const WARMUP_S = Number(env.BENCH_WARMUP_SECONDS ?? 5);
const CONCURRENCY = Number(env.BENCH_CONCURRENCY || 64);
/** The rate the circuit goal names: circuits offered at it (open loop) give the latency at that rate. */
const RATE = Number(env.BENCH_RATE || 1_000);
const FAULT = env.BENCH_FAULT !== '0';
const CHANGES = Number(env.BENCH_CHANGES || 50);
const SHAPE = { identities: Number(env.BENCH_IDENTITIES || 10_000), services: Number(env.BENCH_SERVICES || 2_000), servicePolicies: Number(env.BENCH_POLICIES || 1_000) };
const POPULATE_CONCURRENCY = Number(env.BENCH_POPULATE_CONCURRENCY || 16);
const POPULATE_API = env.BENCH_POPULATE === 'api';
const GOALS = { circuitsPerSecond: 1_000, circuitP99Ms: 25, fullStateMs: 2_000, changeP99Ms: 500 };

const log = (m: string) => console.log(`[bench] ${m}`);
const met = (ok: boolean) => (ok ? 'met' : 'NOT met');

async function main(): Promise<void> {
  const infra = await testInfra();
  const db = await createTestDatabase(infra.databaseUrl, 'bench');
  const suffix = randomBytes(4).toString('hex');
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ziti-bench-circuits-'));
  await chmod(dataDir, 0o755);
  const adminPassword = `Bench!${randomBytes(12).toString('base64url')}1`;
  const stream = `ZITI_BENCH_${suffix}`;
  const ctl = await child<ControllerInfo>('controller-child.js', {
    dataDir, databaseUrl: db.url, natsUrl: infra.natsUrl, redisUrl: infra.redisUrl, natsStream: stream, natsSubjectPrefix: `bench.${suffix}`,
    cacheKeyPrefix: `bench:${suffix}:`, listenHost: '127.0.0.1', port: 0, routerCtrlPort: 0, servicePorts: 'ephemeral',
    adminUsername: 'admin', adminPassword, events: null,
  });
  const api = new Api(ctl.info.url, ctl.info.caCertPem, Math.max(8, POPULATE_CONCURRENCY));
  let echo: Child<{ port: number }> | undefined;
  let closeDouble: (() => Promise<void>) | undefined;
  try {
    api.token = await api.login('admin', adminPassword, 'management');
    const tag = `bench-${suffix}`;
    const net = await smallNetwork(api, ctl.info.routerCtrlPort, tag);
    closeDouble = () => net.double.close();
    log(`${os.cpus().length} CPU(s); router double ${net.router.routerId} connected, terminator created`);

    // 1. Circuits, and the channel ceiling before and after.
    echo = await child<{ port: number }>('echo-child.js', { keyPem: net.router.keyPem, certPem: net.router.serverCertPem, caPem: net.router.caPem });
    const echoCh = await echoChannel(echo.info.port, net.router);
    const errors: string[] = [];
    await echoPhase(echoCh, 2_000, CONCURRENCY);
    await circuitPhase(net, WARMUP_S * 1000, CONCURRENCY, FAULT, errors);
    const before = await echoPhase(echoCh, SECONDS * 1000, CONCURRENCY);
    const circuits = await circuitPhase(net, SECONDS * 1000, CONCURRENCY, FAULT, errors);
    const after = await echoPhase(echoCh, SECONDS * 1000, CONCURRENCY);
    echoCh.close('done');
    const atRate = await circuitsAtRate(net, SECONDS * 1000, RATE, FAULT, errors);
    const ceiling = (rate(before) + rate(after)) / 2;
    const p = (ph: Phase, q: number) => percentile(ph.latenciesMs, q).toFixed(1);
    const cps = rate(circuits);
    const lines: string[] = [];
    const out = (m: string) => {
      lines.push(m);
      log(m);
    };
    out(`circuits, closed loop: ${cps.toFixed(0)}/s (${circuits.count} ok, ${circuits.errors} failed${errors.length ? `: ${errors.join('; ')}` : ''}), ` +
      `${CONCURRENCY} in flight, ${SECONDS} s, ${FAULT ? 'each torn down by a Fault' : 'no Fault'}; p50 ${p(circuits, 50)} ms, p99 ${p(circuits, 99)} ms (the queue of ${CONCURRENCY} in flight)`);
    out(`circuits offered at ${RATE}/s for ${SECONDS} s (open loop): ${atRate.count} ok, ${atRate.errors} failed of ${atRate.issued}, the last answered after ${atRate.seconds.toFixed(1)} s; ` +
      `p50 ${p(atRate, 50)} ms, p99 ${p(atRate, 99)} ms from when each was due ` +
      `(goal ${GOALS.circuitsPerSecond}/s at p99 < ${GOALS.circuitP99Ms} ms: ${met(RATE >= GOALS.circuitsPerSecond && atRate.errors === 0 && atRate.seconds < SECONDS + 1 && percentile(atRate.latenciesMs, 99) < GOALS.circuitP99Ms)})`);
    out(`channel ceiling: ${ceiling.toFixed(0)} round trips/s (before ${rate(before).toFixed(0)}, after ${rate(after).toFixed(0)}; p50 ${p(before, 50)} ms, p99 ${p(before, 99)} ms); ratio circuits/ceiling ${(cps / ceiling).toFixed(3)}`);
    if (circuits.errors > 0 || atRate.errors > 0) process.exitCode = 1;

    // 2 and 3 on the small model.
    const small = await fullState(net.double);
    out(`small model full state: ${small.ms.toFixed(1)} ms, ${small.bodyBytes} bytes, ${small.events} events`);
    const dialRoles = [`#${tag}-users`];
    const smallChanges = await changeDelays(api, net.double, { n: CHANGES, tag: `${tag}-small`, policyId: net.dialPolicyId, identityRoles: dialRoles, spareIdentityId: net.spareIdentityId });
    out(`small model change → ChangeSet (${CHANGES} changes): ${fmt(smallChanges.all)} from the API's answer, ${fmt(smallChanges.fromRequest)} from the request; ` +
      `service create ${fmt(smallChanges.serviceCreate)}, policy PATCH ${fmt(smallChanges.policyPatch)} (goal p99 < ${GOALS.changeP99Ms} ms: ${met(percentile(smallChanges.all, 99) < GOALS.changeP99Ms)})`);

    // The large model.
    const renewal = setInterval(() => void renew(net.double).catch(() => undefined), 60_000);
    const t0 = Date.now();
    try {
      await populate(api, SHAPE, `${tag}-l`, POPULATE_CONCURRENCY, POPULATE_API ? undefined : db.url, log);
    } finally {
      clearInterval(renewal);
    }
    const populateS = (Date.now() - t0) / 1000;
    await renew(net.double);
    const t1 = Date.now();
    await settle(net.double, 5_000);
    out(`populated ${SHAPE.identities} identities, ${SHAPE.services} services, ${SHAPE.servicePolicies} service policies in ${populateS.toFixed(1)} s (identities ${POPULATE_API ? 'through the API' : 'by SQL'}, the rest through the API, ` +
      `${POPULATE_CONCURRENCY} in flight); the double's model settled ${((Date.now() - t1 - 5_000) / 1000).toFixed(1)} s after`);
    const larges = [];
    for (let i = 0; i < 3; i++) larges.push(await fullState(net.double));
    const ms = larges.map((s) => s.ms);
    const median = [...ms].sort((a, b) => a - b)[1]!;
    out(`large model full state: median ${median.toFixed(0)} ms (${ms.map((x) => x.toFixed(0)).join(', ')}), ${larges[0]!.bodyBytes} bytes, ${larges[0]!.events} events ` +
      `(goal < ${GOALS.fullStateMs} ms: ${met(median < GOALS.fullStateMs)})`);
    const largeChanges = await changeDelays(api, net.double, { n: CHANGES, tag: `${tag}-large`, policyId: net.dialPolicyId, identityRoles: dialRoles, spareIdentityId: net.spareIdentityId });
    out(`large model change → ChangeSet (${CHANGES} changes): ${fmt(largeChanges.all)} from the API's answer, ${fmt(largeChanges.fromRequest)} from the request; ` +
      `service create ${fmt(largeChanges.serviceCreate)}, policy PATCH ${fmt(largeChanges.policyPatch)} (goal p99 < ${GOALS.changeP99Ms} ms: ${met(percentile(largeChanges.all, 99) < GOALS.changeP99Ms)})`);
    console.log(`\nRouter control plane benchmark (${os.cpus().length} CPUs, real PostgreSQL/NATS/Redis)\n${lines.map((l) => `- ${l}`).join('\n')}`);
  } finally {
    await closeDouble?.().catch(() => undefined);
    await echo?.stop();
    api.close();
    await ctl.stop();
    await db.drop().catch(() => undefined);
    await deleteStream(infra.natsUrl, stream).catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
