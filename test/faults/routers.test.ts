import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { CtrlContentType, EdgeContentType, ctrlPb, newMessage } from '@ziti/channel';
import type { RouterDouble } from '../support/router-double.js';
import { type Cluster, type Replica, startCluster, until, waitReplicaReady } from './support/cluster.js';
import { GatewayPool } from './support/load.js';
import { Api } from './support/network.js';
import {
  type RouterNetwork,
  buildRouterNetwork,
  circuitIds,
  createService,
  gapIn,
  holderOf,
  host,
  inChangeSet,
  inModel,
  online,
  rdmPosition,
  reconnect,
  sessionToken,
  terminatorsOf,
} from './support/routers.js';

/**
 * Routers through faults of the control plane, played by router doubles against the controller
 * run as separate processes with fabric as two replicas behind one control-plane balancer (see
 * support/cluster.ts): a replica holding a router killed, both replicas killed under an
 * established circuit, NATS and PostgreSQL stopped. Process output goes to routers-logs/ beside
 * this file.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PUBLIC_KEY = new Map([[1003, randomBytes(32)]]);

let cluster: Cluster;
let pool: GatewayPool;
let api: Api;
let net: RouterNetwork;
const started = Date.now();
type Side = 'a' | 'b';
const dbl: Partial<Record<Side, RouterDouble>> = {};
/** The index each double subscribed with (its data model position when it connected). */
const subscribedAt: Record<Side, number> = { a: 0, b: 0 };
const linkPort: Record<Side, number> = { a: 14101, b: 14102 };

const fabrics = (): Replica[] => cluster.replicas.filter((r) => r.context === 'fabric');
const identity = (side: Side) => net.routers[side];
const listeners = (side: Side) => [{ address: `tls:127.0.0.1:${linkPort[side]}`, protocol: 'tls', costTags: [], groups: ['default'], localBinding: '' }];

/** Connects (again) the router of `side` as a router does: every 500 ms until taken, from its last data model position. */
async function connect(side: Side, forMs = 60_000): Promise<RouterDouble> {
  const before = dbl[side];
  const pos = before ? rdmPosition(before) : { rdmIndex: 0, rdmTimelineId: '' };
  await before?.close();
  subscribedAt[side] = pos.rdmIndex;
  dbl[side] = await reconnect(cluster, identity(side), { ...pos, linkListeners: listeners(side) }, forMs);
  return dbl[side]!;
}

async function waitOnline(side: Side, timeoutMs: number): Promise<void> {
  await until(() => online(api, net, identity(side).routerId), `router ${side} online and synchronised`, timeoutMs, 250);
}

/** A link from a to b as router a reports it (its id). */
async function linkAB(): Promise<string> {
  const id = randomUUID();
  await dbl.a!.reportLinks([{ id, destRouterId: identity('b').routerId, linkProtocol: 'tls', dialAddress: `tls:127.0.0.1:${linkPort.b}`, iteration: 1 }]);
  return id;
}

/** A circuit dialed on a to the terminator on b, tried again while the link and b's presence reach a's replica. */
async function circuitAB(timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const c = await dbl.a!.createCircuit({ sessionToken: await sessionToken(api, net, 'Dial'), apiSessionToken: net.user.token, peerData: PUBLIC_KEY });
    if (c.ok) return c.circuitId;
    if (Date.now() > deadline) throw new Error(`no circuit from a to b within ${timeoutMs} ms: ${String(c.errorCode)} ${c.errorMessage}`);
    await sleep(500);
  }
}

beforeAll(async () => {
  cluster = await startCluster(join(__dirname, 'routers-logs'), { replicated: ['fabric'] });
  pool = new GatewayPool(cluster.gateways.map((g) => ({ name: g.name, url: g.url })));
  pool.startChecks();
  api = new Api(pool);
  net = await buildRouterNetwork(api, cluster.admin);
}, 600_000);

afterAll(async () => {
  try {
    for (const d of Object.values(dbl)) await d?.close();
    pool?.close();
    console.log([`routers.test.ts: the whole run took ${((Date.now() - started) / 1000).toFixed(0)} s`, ...notes].join('\n'));
  } finally {
    await cluster?.close();
  }
}, 120_000);

const SCENARIO_TIMEOUT = 150_000;
/** What changed during an outage must be at the routers within this of the dependency's return. */
const CONVERGE_MS = 15_000;
/** Measurements, printed at the end. */
const notes: string[] = [];
const note = (line: string) => void notes.push(line);

it('a circuit across two routers held by different replicas is routed (the Route to the other replica\'s router relayed)', async () => {
  await connect('a');
  await waitOnline('a', 20_000);
  const holderA = await holderOf(cluster, identity('a').routerId);
  expect(holderA).toBeDefined();
  // The balancer spreads connections: b is dialed again until another replica takes it.
  for (let attempt = 0; attempt < 6; attempt++) {
    await connect('b');
    await waitOnline('b', 20_000);
    if ((await holderOf(cluster, identity('b').routerId))?.name !== holderA!.name) break;
  }
  expect((await holderOf(cluster, identity('b').routerId))?.name).not.toBe(holderA!.name);

  await linkAB();
  await host(api, net, dbl.b!);
  const circuitId = await circuitAB();
  expect(dbl.a!.routes.some((r) => r.circuitId === circuitId)).toBe(true);
  expect(dbl.b!.routes.find((r) => r.circuitId === circuitId)?.egress).toBeDefined();
  await until(async () => (await circuitIds(api, net)).includes(circuitId), 'the circuit listed', 10_000);
}, SCENARIO_TIMEOUT);

it('kill -9 of the replica holding a router: it is online through the other within 10 s, its missed change sets replayed, its terminator listed once', async () => {
  const routerId = identity('a').routerId;
  const address = await host(api, net, dbl.a!);
  const before = await createService(api, net, 'before-kill');
  await until(() => inChangeSet(dbl.a!, before), 'the change set before the kill', 20_000);
  const pos = rdmPosition(dbl.a!);
  const killed = (await holderOf(cluster, routerId))!;
  expect(killed).toBeDefined();
  const survivor = fabrics().find((r) => r !== killed)!;

  const killedAt = Date.now();
  await killed.process.kill();
  await until(() => dbl.a!.channel.closed, "router a's channel to close", 5_000, 50);
  const missed = await createService(api, net, 'while-away');
  await connect('a', 10_000);
  await waitOnline('a', Math.max(0, killedAt + 10_000 - Date.now()));
  const onlineMs = Date.now() - killedAt;
  note(`router online through the other replica ${(onlineMs / 1000).toFixed(1)} s after the kill`);
  expect(onlineMs).toBeLessThanOrEqual(10_000);
  expect((await holderOf(cluster, routerId))?.name).toBe(survivor.name);

  // It subscribed with its index and timeline: the change sets it missed, not a full state.
  await until(() => inChangeSet(dbl.a!, missed), 'the missed change set', 20_000);
  expect(subscribedAt.a).toBe(pos.rdmIndex);
  expect({ fullStates: dbl.a!.rdm.dataStates.length, gap: gapIn(dbl.a!, pos.rdmIndex) }).toEqual({ fullStates: 0, gap: undefined });

  // A router creates its terminators again after a reconnect, with the same addresses.
  await host(api, net, dbl.a!, address);
  await sleep(1_000);
  expect((await terminatorsOf(api, net, routerId)).filter((t) => t.id === address)).toHaveLength(1);

  killed.process.start();
  await waitReplicaReady(killed, 60_000);
}, SCENARIO_TIMEOUT);

it('both replicas killed (-9) under an established circuit: after their restart the routers confirm it and it is not unrouted', async () => {
  await linkAB();
  const circuitId = await circuitAB();
  await until(async () => (await circuitIds(api, net)).includes(circuitId), 'the circuit listed', 10_000);
  await Promise.all(fabrics().map((r) => r.process.kill()));
  await until(() => dbl.a!.channel.closed && dbl.b!.channel.closed, 'both channels to close', 5_000, 50);
  // A change while no replica runs (policy keeps it): the routers, back with their index, must not miss it.
  const whileDown = await createService(api, net, 'no-fabric');
  for (const r of fabrics()) r.process.start();
  for (const r of fabrics()) await waitReplicaReady(r, 60_000);
  await Promise.all([connect('a'), connect('b')]);
  await Promise.all([waitOnline('a', 20_000), waitOnline('b', 20_000)]);
  for (const side of ['a', 'b'] as const) await until(() => inModel(dbl[side]!, whileDown), `router ${side} to learn the change made while fabric was down`, 20_000);
  expect({ a: gapIn(dbl.a!, subscribedAt.a), b: gapIn(dbl.b!, subscribedAt.b) }).toEqual({ a: undefined, b: undefined });

  const confirmation = () => newMessage(CtrlContentType.CircuitConfirmation, Buffer.from(ctrlPb.CircuitConfirmation.encode({ circuitIds: [circuitId], idleTimes: {} }).finish()));
  await dbl.a!.send(confirmation());
  await dbl.b!.send(confirmation());
  await sleep(4_000);
  expect({ a: dbl.a!.unroutes.filter((u) => u.circuitId === circuitId), b: dbl.b!.unroutes.filter((u) => u.circuitId === circuitId) }).toEqual({ a: [], b: [] });
  expect(await circuitIds(api, net)).toContain(circuitId);
}, SCENARIO_TIMEOUT);

it('NATS stopped 10 s: a policy change made meanwhile reaches the routers after it returns, in order, nothing missed', async () => {
  await cluster.nats.stop();
  const stoppedAt = Date.now();
  const during = await createService(api, net, 'during-nats');
  await sleep(Math.max(0, stoppedAt + 10_000 - Date.now()));
  await cluster.nats.start();
  for (const side of ['a', 'b'] as const) await until(() => inChangeSet(dbl[side]!, during), `router ${side} to receive the change made without NATS`, CONVERGE_MS);
  note(`change made without NATS at the routers ${((Date.now() - stoppedAt - 10_000) / 1000).toFixed(1)} s after it returned`);
  expect({ a: gapIn(dbl.a!, subscribedAt.a), b: gapIn(dbl.b!, subscribedAt.b), closed: [dbl.a!.channel.closed, dbl.b!.channel.closed] }).toEqual({ a: undefined, b: undefined, closed: [false, false] });
}, SCENARIO_TIMEOUT);

it('PostgreSQL stopped: a new circuit is refused promptly with an edge error code; afterwards the routers are online, get new changes in order, and circuits are created again', async () => {
  const dialToken = await sessionToken(api, net, 'Dial');
  await cluster.postgres.stop();
  const stoppedAt = Date.now();
  const asked = Date.now();
  const refused = await dbl.a!.createCircuit({ sessionToken: dialToken, apiSessionToken: net.user.token, peerData: PUBLIC_KEY, timeoutMs: 30_000 }).catch((err: Error) => err);
  const answeredMs = Date.now() - asked;
  note(`circuit request without PostgreSQL answered in ${(answeredMs / 1000).toFixed(1)} s: ${refused instanceof Error ? refused.message : refused.ok ? 'created' : `error code ${String(refused.errorCode)}, ${refused.errorMessage}`}`);
  await sleep(Math.max(0, stoppedAt + 10_000 - Date.now()));
  await cluster.postgres.start();
  expect(refused).not.toBeInstanceOf(Error);
  if (refused instanceof Error) return;
  expect({ contentType: refused.message.contentType, ok: refused.ok, coded: !refused.ok && typeof refused.errorCode === 'number', prompt: answeredMs <= 15_000 }).toEqual({
    contentType: EdgeContentType.Error,
    ok: false,
    coded: true,
    prompt: true,
  });

  for (const side of ['a', 'b'] as const) {
    if (dbl[side]!.channel.closed) await connect(side);
    await waitOnline(side, 30_000);
    expect(await holderOf(cluster, identity(side).routerId)).toBeDefined();
  }
  const after = await createService(api, net, 'after-postgres');
  for (const side of ['a', 'b'] as const) await until(() => inChangeSet(dbl[side]!, after), `router ${side} to receive a change after PostgreSQL returned`, CONVERGE_MS);
  expect({ a: gapIn(dbl.a!, subscribedAt.a), b: gapIn(dbl.b!, subscribedAt.b) }).toEqual({ a: undefined, b: undefined });
  expect(await circuitAB(30_000)).toMatch(/^[0-9a-f-]{36}$/);
}, SCENARIO_TIMEOUT);

it('Redis killed and restarted empty: the routers stay online, get new changes in order, and circuits are created', async () => {
  await cluster.redis.kill();
  await sleep(3_000);
  await cluster.redis.start();
  for (const side of ['a', 'b'] as const) {
    expect(dbl[side]!.channel.closed).toBe(false);
    await waitOnline(side, 10_000);
  }
  const after = await createService(api, net, 'after-redis');
  for (const side of ['a', 'b'] as const) await until(() => inChangeSet(dbl[side]!, after), `router ${side} to receive a change after Redis returned`, CONVERGE_MS);
  expect({ a: gapIn(dbl.a!, subscribedAt.a), b: gapIn(dbl.b!, subscribedAt.b) }).toEqual({ a: undefined, b: undefined });
  expect(await circuitAB(20_000)).toMatch(/^[0-9a-f-]{36}$/);
}, SCENARIO_TIMEOUT);
