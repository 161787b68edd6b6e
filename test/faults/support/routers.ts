import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { EdgeContentType, edgeCtrlPb } from '@ziti/channel';
import { RouterDouble, type RouterDoubleOptions } from '../../support/router-double.js';
import { type RouterIdentity, enrollRouter } from '../../support/router-enroll.js';
import type { Cluster, Replica } from './cluster.js';
import { type Api, createUser } from './network.js';

const MGMT = '/edge/management/v1';
const CLIENT = '/edge/client/v1';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the router scenarios share: two enrolled edge routers, a user who may bind and dial one service through them. */
export interface RouterNetwork {
  tag: string;
  adminToken: string;
  serviceId: string;
  user: { id: string; token: string };
  routers: { a: RouterIdentity; b: RouterIdentity };
}

export async function buildRouterNetwork(api: Api, admin: { username: string; password: string }): Promise<RouterNetwork> {
  const tag = `r${randomBytes(3).toString('hex')}`;
  const adminToken = await api.login(admin.username, admin.password, MGMT);
  const post = (path: string, body: unknown) => api.expect(201, 'POST', `${MGMT}${path}`, body, adminToken);
  const user = await createUser(api, adminToken, `${tag}-user`, [`${tag}-users`]);
  const serviceId = await post('/services', { name: `${tag}-svc`, roleAttributes: [`${tag}-svc`], encryptionRequired: true });
  for (const type of ['Bind', 'Dial']) {
    await post('/service-policies', { name: `${tag}-${type}`, type, semantic: 'AnyOf', identityRoles: [`#${tag}-users`], serviceRoles: [`#${tag}-svc`], postureCheckRoles: [] });
  }
  await post('/edge-router-policies', { name: `${tag}-erp`, semantic: 'AnyOf', identityRoles: [`#${tag}-users`], edgeRouterRoles: [`#${tag}-routers`] });
  await post('/service-edge-router-policies', { name: `${tag}-serp`, semantic: 'AnyOf', serviceRoles: [`#${tag}-svc`], edgeRouterRoles: [`#${tag}-routers`] });
  const enroll = async (name: string) => {
    const id = await post('/edge-routers', { name, roleAttributes: [`${tag}-routers`], isTunnelerEnabled: false });
    const res = await api.call('GET', `${MGMT}/edge-routers/${id}`, undefined, adminToken);
    return enrollRouter(res.body.data.enrollmentJwt as string);
  };
  const routers = { a: await enroll(`${tag}-er-a`), b: await enroll(`${tag}-er-b`) };
  const token = await api.login(user.username, user.password);
  return { tag, adminToken, serviceId, user: { id: user.id, token }, routers };
}

/** A session of the user for the service (`Bind` for a terminator, `Dial` for a circuit): its token. */
export async function sessionToken(api: Api, net: RouterNetwork, type: 'Bind' | 'Dial'): Promise<string> {
  const res = await api.call('POST', `${CLIENT}/sessions`, { serviceId: net.serviceId, type }, net.user.token);
  if (res.status !== 201) throw new Error(`${type} session → ${res.status}: ${res.text.slice(0, 300)}`);
  return res.body.data.token as string;
}

/** A service created through the gateway (a change of the router data model): its id. */
export function createService(api: Api, net: RouterNetwork, name: string): Promise<string> {
  return api.expect(201, 'POST', `${MGMT}/services`, { name: `${net.tag}-${name}`, roleAttributes: [], encryptionRequired: true }, net.adminToken);
}

/** `/edge-routers/{id}` as the management API shows it. */
export async function edgeRouterState(api: Api, net: RouterNetwork, id: string): Promise<{ isOnline?: boolean; syncStatus?: string }> {
  const res = await api.call('GET', `${MGMT}/edge-routers/${id}`, undefined, net.adminToken);
  return (res.body?.data ?? {}) as { isOnline?: boolean; syncStatus?: string };
}

export async function online(api: Api, net: RouterNetwork, id: string): Promise<boolean> {
  const r = await edgeRouterState(api, net, id).catch(() => ({}) as { isOnline?: boolean; syncStatus?: string });
  return r.isOnline === true && r.syncStatus === 'SYNC_DONE';
}

/** fabric `/circuits` ids. */
export async function circuitIds(api: Api, net: RouterNetwork): Promise<string[]> {
  const res = await api.call('GET', '/fabric/v1/circuits?limit=500', undefined, net.adminToken);
  if (res.status !== 200) throw new Error(`GET /fabric/v1/circuits → ${res.status}: ${res.text.slice(0, 300)}`);
  return (res.body.data as { id: string }[]).map((c) => c.id);
}

/** The terminators listed for a router. */
export async function terminatorsOf(api: Api, net: RouterNetwork, routerId: string): Promise<{ id: string; address: string }[]> {
  const filter = encodeURIComponent(`router = "${routerId}"`);
  const res = await api.call('GET', `${MGMT}/terminators?limit=500&filter=${filter}`, undefined, net.adminToken);
  if (res.status !== 200) throw new Error(`GET /terminators → ${res.status}: ${res.text.slice(0, 300)}`);
  return res.body.data as { id: string; address: string }[];
}

/** One connection attempt through the control plane's balancer, bounded (a backend that just died may swallow it). */
export async function connectOnce(cluster: Cluster, identity: RouterIdentity, o: Partial<RouterDoubleOptions> = {}, timeoutMs = 3_000): Promise<RouterDouble> {
  const attempt = RouterDouble.connect({ identity, host: '127.0.0.1', port: cluster.routerCtrlPort, heartbeatIntervalMs: 0, ...o });
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no hello answer within ${timeoutMs} ms`)), timeoutMs)));
  try {
    return await Promise.race([attempt, bound]);
  } catch (err) {
    // A late success is closed (the router gave up on it).
    void attempt.then((d) => d.close(), () => undefined);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** Dials as a router does after losing its channel: again every 500 ms until a replica takes it. */
export async function reconnect(cluster: Cluster, identity: RouterIdentity, o: Partial<RouterDoubleOptions> = {}, forMs = 60_000): Promise<RouterDouble> {
  const deadline = Date.now() + forMs;
  for (;;) {
    try {
      return await connectOnce(cluster, identity, o);
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`router ${identity.routerId} not reconnected within ${forMs} ms: ${(err as Error).message}`);
      await sleep(500);
    }
  }
}

/** The router's position in the data model, as a router keeps it: the last index it applied and its timeline. */
export function rdmPosition(d: RouterDouble): { rdmIndex: number; rdmTimelineId: string } {
  const state = d.rdm.dataStates[d.rdm.dataStates.length - 1];
  const sets = d.rdm.changeSets.filter((c) => !c.isSynthetic);
  const last = Math.max(state?.endIndex ?? 0, ...sets.map((c) => c.index));
  return { rdmIndex: last, rdmTimelineId: state?.timelineId ?? '' };
}

/**
 * The first break in what the router applied on this channel, if any: from the index it
 * subscribed with, each full state sets the index, each change set (not synthetic) must follow the
 * one before (its previousIndex the index the router is at).
 */
export function gapIn(d: RouterDouble, subscribedIndex: number): string | undefined {
  let at = subscribedIndex;
  for (const m of d.received) {
    if (m.contentType === EdgeContentType.DataState) at = edgeCtrlPb.DataState.decode(m.body).endIndex;
    if (m.contentType !== EdgeContentType.DataStateChangeSet) continue;
    const s = edgeCtrlPb.DataState_ChangeSet.decode(m.body);
    if (s.isSynthetic) continue;
    if (s.previousIndex !== at) return `change set ${s.index} follows ${s.previousIndex}, the router was at ${at}`;
    at = s.index;
  }
  return undefined;
}

/** Whether the router received the entity in a change set (not a full state). */
export function inChangeSet(d: RouterDouble, serviceId: string): boolean {
  return d.rdm.changeSets.some((c) => c.changes.some((e) => e.service?.id === serviceId));
}

/** Whether the router received the entity at all (a full state or a change set). */
export function inModel(d: RouterDouble, serviceId: string): boolean {
  return inChangeSet(d, serviceId) || d.rdm.dataStates.some((s) => s.events.some((e) => e.service?.id === serviceId));
}

/** A terminator of the service on the router (CreateTerminatorV2 with `address`). */
export async function host(api: Api, net: RouterNetwork, d: RouterDouble, address: string = randomUUID()): Promise<string> {
  const r = await d.createTerminator({ address, sessionToken: await sessionToken(api, net, 'Bind'), apiSessionToken: net.user.token });
  if (r.result !== 0) throw new Error(`terminator on ${d.routerId} refused: ${JSON.stringify(r)}`);
  return address;
}

/**
 * The fabric replica holding the router's channel, if any: its presence row's replica, whose relay
 * address is a replica's own gRPC port (read from the cluster's PostgreSQL; a connection per call,
 * as the database is stopped and started).
 */
export async function holderOf(cluster: Cluster, routerId: string): Promise<Replica | undefined> {
  const client = new Client({ connectionString: cluster.postgres.url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ relay_address: string }>(
      `SELECT r.relay_address FROM fabric.router_presence p JOIN fabric.replicas r ON r.id = p.replica WHERE p.router_id = $1 AND p.connected`,
      [routerId],
    );
    const port = Number(rows[0]?.relay_address.split(':').pop());
    return cluster.replicas.find((r) => r.context === 'fabric' && r.grpcPort === port);
  } finally {
    await client.end().catch(() => undefined);
  }
}
