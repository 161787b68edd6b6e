import { randomUUID } from 'node:crypto';
import type { ctrlPb } from '@ziti/channel';
import { RouterDouble } from '../../../test/support/router-double.js';
import { type RouterIdentity, enrollRouter } from '../../../test/support/router-enroll.js';
import type { Api } from '../../common/src/api.js';
import { pool, until } from '../../common/src/load.js';

/**
 * A star of routers: router 0 is the hub, every other router has one link to it (reported by the
 * spoke, as the dialing router reports a link). Service j is hosted by terminators on router j
 * only, so a circuit dialed on spoke i for the service of spoke j (i ≠ j) takes the path
 * i → hub → j: three routers, two links.
 */
export interface RouterNet {
  tag: string;
  routers: RouterIdentity[];
  /** The connected double of each router (replaced when a router moves to another replica). */
  doubles: RouterDouble[];
  /** The link of spoke i to the hub (index 0 unused). */
  linkIds: string[];
  /** Service j: hosted on router j. */
  serviceIds: string[];
  userId: string;
  /** The user's legacy API session token (pushed to every router). */
  userToken: string;
  bindTokens: string[];
  dialTokens: string[];
  dialPolicyId: string;
  dialRoles: string[];
  /** An identity no policy selects, that the change measurement adds to and removes from a policy. */
  spareIdentityId: string;
  /** Terminators each router hosts. */
  terminatorsPerRouter: number;
}

export interface NetShape {
  routers: number;
  terminatorsPerRouter: number;
  /** Requests (enrollments, creates, sessions) in flight while building. */
  concurrency: number;
}

/** A link listener the double announces in its hello (nothing listens: links are only reported). */
const linkListener = (i: number): ctrlPb.Listener => ({ address: `tls:127.0.0.1:${20_000 + i}`, protocol: 'tls', costTags: [], groups: ['default'], localBinding: '' });

/** Connects router `i` as a double to the control listener at `port`, and waits for its first DataState. */
export async function connectDouble(net: Pick<RouterNet, 'routers'>, i: number, port: number): Promise<RouterDouble> {
  const d = await RouterDouble.connect({ identity: net.routers[i]!, host: '127.0.0.1', port, heartbeatIntervalMs: 0, linkListeners: [linkListener(i)] });
  await until(() => d.rdm.dataStates.length > 0, `router ${i}'s first DataState`, 120_000);
  return d;
}

/** Spoke i reports its link to the hub (a new link id each time: a reconnected router dials again). */
export async function reportLink(net: RouterNet, i: number): Promise<void> {
  const id = randomUUID();
  net.linkIds[i] = id;
  await net.doubles[i]!.reportLinks([{ id, destRouterId: net.routers[0]!.routerId, linkProtocol: 'tls', dialAddress: linkListener(0).address, iteration: 1 }]);
}

/** Router j's terminators of service j, `concurrency` binds in flight. */
export async function bindTerminators(net: RouterNet, j: number, concurrency: number): Promise<void> {
  const d = net.doubles[j]!;
  await pool(Array.from({ length: net.terminatorsPerRouter }), concurrency, async () => {
    const r = await d.createTerminator({ address: randomUUID(), sessionToken: net.bindTokens[j]!, apiSessionToken: net.userToken }, 60_000);
    if (r.result !== 0) throw new Error(`router ${j}: terminator refused: ${JSON.stringify(r)}`);
  });
  // The responses are not needed any more; waitFor scans what is kept.
  d.received.splice(0);
}

/** Counts of the management API's lists (`meta.pagination.totalCount`). */
export async function countOf(api: Api, path: string): Promise<number> {
  const r = await api.request('GET', `/edge/management/v1${path}${path.includes('?') ? '&' : '?'}limit=1`);
  if (r.status !== 200) throw new Error(`GET ${path}: ${r.status}`);
  return Number(r.body.meta.pagination.totalCount);
}

/** The links fabric lists. */
export async function linkCount(api: Api): Promise<number> {
  const r = await api.request('GET', '/fabric/v1/links?limit=1');
  if (r.status !== 200) throw new Error(`GET /fabric/v1/links: ${r.status}`);
  return Number(r.body.meta.pagination.totalCount);
}

/**
 * Builds the network through the management API and the control listener at `ctrlPort`: a user,
 * one service per router (Bind and Dial policies, edge router and service edge router policies
 * over all), the routers created and enrolled as `ziti router enroll` does, connected as doubles,
 * the spokes' links, then every router's terminators. `log` reports each step's time.
 */
export async function buildNetwork(api: Api, ctrlPort: number, tag: string, shape: NetShape, log: (m: string) => void): Promise<RouterNet> {
  const t0 = Date.now();
  const step = (m: string) => log(`${m} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  const n = shape.routers;
  const c = shape.concurrency;
  const password = `Pw!${randomUUID()}A1`;
  const userId = await api.mgmt('POST', '/identities', { name: `${tag}-user`, type: 'User', isAdmin: false, roleAttributes: [`${tag}-users`] });
  await api.mgmt('POST', '/authenticators', { method: 'updb', identityId: userId, username: `${tag}-user`, password });
  const spareIdentityId = await api.mgmt('POST', '/identities', { name: `${tag}-spare`, type: 'User', isAdmin: false });
  const serviceIds: string[] = new Array(n);
  await pool(Array.from({ length: n }), c, async (_, j) => {
    serviceIds[j] = await api.mgmt('POST', '/services', { name: `${tag}-s${j}`, roleAttributes: [`${tag}-svc`], encryptionRequired: true });
  });
  await api.mgmt('POST', '/service-policies', { name: `${tag}-bind`, type: 'Bind', semantic: 'AnyOf', identityRoles: [`@${userId}`], serviceRoles: [`#${tag}-svc`] });
  const dialRoles = [`#${tag}-users`];
  const dialPolicyId = await api.mgmt('POST', '/service-policies', { name: `${tag}-dial`, type: 'Dial', semantic: 'AnyOf', identityRoles: dialRoles, serviceRoles: [`#${tag}-svc`] });
  await api.mgmt('POST', '/edge-router-policies', { name: `${tag}-erp`, semantic: 'AnyOf', identityRoles: [`#${tag}-users`], edgeRouterRoles: [`#${tag}-routers`] });
  await api.mgmt('POST', '/service-edge-router-policies', { name: `${tag}-serp`, semantic: 'AnyOf', serviceRoles: [`#${tag}-svc`], edgeRouterRoles: [`#${tag}-routers`] });
  step(`${n} services and their policies created`);

  const routers: RouterIdentity[] = new Array(n);
  await pool(Array.from({ length: n }), c, async (_, i) => {
    const id = await api.mgmt('POST', '/edge-routers', { name: `${tag}-er${i}`, roleAttributes: [`${tag}-routers`], isTunnelerEnabled: false });
    const jwt = (await api.request('GET', `/edge/management/v1/edge-routers/${id}`)).body.data.enrollmentJwt as string;
    routers[i] = await enrollRouter(jwt);
  });
  step(`${n} edge routers created and enrolled, ${c} at a time`);
  const net: RouterNet = {
    tag, routers, doubles: new Array(n), linkIds: new Array(n), serviceIds, userId, userToken: '', bindTokens: [], dialTokens: [],
    dialPolicyId, dialRoles, spareIdentityId, terminatorsPerRouter: shape.terminatorsPerRouter,
  };
  await pool(Array.from({ length: n }), c, async (_, i) => {
    net.doubles[i] = await connectDouble(net, i, ctrlPort);
  });
  step(`${n} router doubles connected and synced, ${c} at a time`);

  net.userToken = await api.login(`${tag}-user`, password, 'client');
  await until(() => net.doubles.every((d) => d.apiSessions.has(net.userToken)), 'the API session pushed to every router', 60_000);
  const session = async (serviceId: string, type: 'Dial' | 'Bind') => {
    const r = await until(async () => {
      const s = await api.request('POST', '/edge/client/v1/sessions', { serviceId, type }, net.userToken);
      return s.status === 201 ? s : undefined;
    }, `a ${type} session`, 60_000);
    return r.body.data.token as string;
  };
  await pool(serviceIds, c, async (s, j) => {
    net.bindTokens[j] = await session(s, 'Bind');
    net.dialTokens[j] = await session(s, 'Dial');
  });
  step(`Bind and Dial sessions of the ${n} services`);

  for (let i = 1; i < n; i++) await reportLink(net, i);
  await until(async () => (await linkCount(api)) === n - 1, `the ${n - 1} links listed`, 60_000);
  step(`${n - 1} links to the hub reported`);
  // 10 routers at a time, 10 binds in flight on each.
  await pool(Array.from({ length: n }), 10, (_, j) => bindTerminators(net, j, 10));
  const terminators = await countOf(api, '/terminators');
  if (terminators !== n * shape.terminatorsPerRouter) throw new Error(`expected ${n * shape.terminatorsPerRouter} terminators, the API lists ${terminators}`);
  step(`${terminators} terminators created (${shape.terminatorsPerRouter} a router)`);
  return net;
}

/**
 * Moves routers to the control listener at `port` (another replica), as a balancer would spread
 * their connections: each closes, its terminators are removed by the replica it left, it connects
 * there, reports its link again and binds its terminators again.
 */
export async function moveRouters(api: Api, net: RouterNet, indexes: readonly number[], port: number, log: (m: string) => void): Promise<void> {
  const t0 = Date.now();
  const before = await countOf(api, '/terminators');
  for (const i of indexes) await net.doubles[i]!.close();
  const left = before - indexes.length * net.terminatorsPerRouter;
  await until(async () => (await countOf(api, '/terminators')) === left, `the moved routers' terminators removed (${left} left)`, 120_000);
  await pool(indexes, 10, async (i) => {
    net.doubles[i] = await connectDouble(net, i, port);
  });
  await until(() => indexes.every((i) => net.doubles[i]!.apiSessions.has(net.userToken)), 'the API session pushed to the moved routers', 60_000);
  for (const i of indexes) if (i !== 0) await reportLink(net, i);
  await until(async () => (await linkCount(api)) === net.routers.length - 1, 'the links listed again', 60_000);
  await pool(indexes, 10, (j) => bindTerminators(net, j, 10));
  await until(async () => (await countOf(api, '/terminators')) === before, 'every terminator listed again', 60_000);
  log(`${indexes.length} routers moved to the second replica, links and terminators again (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
}

/** Drops what the doubles recorded (messages, routes), so that waits scan only what comes next. */
export function forget(doubles: readonly RouterDouble[]): void {
  for (const d of doubles) {
    d.received.splice(0);
    d.routes.splice(0);
    d.unroutes.splice(0);
    d.rdm.changeSets.splice(0, Math.max(0, d.rdm.changeSets.length - 1));
  }
}
