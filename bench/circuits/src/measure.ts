import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import tls from 'node:tls';
import { Channel, EdgeContentType, EdgeHeader, edgeCtrlPb, getString, newMessage } from '@ziti/channel';
import type { RouterDouble } from '../../../test/support/router-double.js';
import type { RouterIdentity } from '../../../test/support/router-enroll.js';
import type { Api } from './api.js';
import { ECHO_REPLY, ECHO_REQUEST } from './echo-child.js';
import { type Phase, percentile, run } from './load.js';
import type { SmallNetwork } from './net.js';

/** Circuits through the double: CreateCircuitV2 → CreateCircuitV2Response, then (with `fault`) an ingress Fault. */
export function circuitPhase(net: SmallNetwork, ms: number, concurrency: number, fault: boolean, errors: string[]): Promise<Phase> {
  const peerData = new Map([[1003, randomBytes(32)]]); // the initiator's public key (the service requires encryption)
  return run(ms, concurrency, async () => {
    const c = await net.double.createCircuit({ sessionToken: net.dialToken, apiSessionToken: net.userToken, peerData, timeoutMs: 10_000 });
    if (!c.ok) {
      if (errors.length < 5) errors.push(`${String(c.errorCode)} ${c.errorMessage}`);
      return false;
    }
    if (fault) void net.double.sendFault(0, c.circuitId).catch(() => undefined);
    return true;
  });
}

/** One bare @ziti/channel over mutual TLS to the echo process, the way the double holds its control channel. */
export async function echoChannel(port: number, id: RouterIdentity): Promise<Channel> {
  const socket = tls.connect({ host: '127.0.0.1', port, ca: id.caPem, cert: id.certPem, key: id.keyPem });
  await once(socket, 'secureConnect');
  socket.setNoDelay(true);
  return new Channel(socket, { label: 'echo client', heartbeatIntervalMs: 0 });
}

/** Request/reply round trips on one channel, `concurrency` in flight; the request carries about what a CreateCircuitV2 does. */
export function echoPhase(ch: Channel, ms: number, concurrency: number): Promise<Phase> {
  const body = randomBytes(1024);
  return run(ms, concurrency, async () => (await ch.request(newMessage(ECHO_REQUEST, body), { timeoutMs: 10_000 })).contentType === ECHO_REPLY);
}

export interface FullState {
  ms: number;
  bodyBytes: number;
  events: number;
}

/** A fresh subscription (index 0, no timeline): from sending SubscribeToDataModel to the DataState decoded by the double. */
export async function fullState(double: RouterDouble): Promise<FullState> {
  const id = randomUUID();
  double.rdm.subscriptionId = id;
  const t0 = performance.now();
  await double.subscribe({ currentIndex: 0, timelineId: '' });
  const m = await double.waitFor(EdgeContentType.DataState, (x) => getString(x.headers, EdgeHeader.RouterDataModelSubscriptionId) === id, 60_000);
  const ms = double.receivedAt.get(m)! - t0;
  return { ms, bodyBytes: m.body.length, events: edgeCtrlPb.DataState.decode(m.body).events.length };
}

/** Waits until no ChangeSet has arrived for `quietMs` (the controller's model caught up with the writes). */
export async function settle(double: RouterDouble, quietMs: number, maxMs = 300_000): Promise<void> {
  const deadline = Date.now() + maxMs;
  let seen = double.rdm.changeSets.length;
  let since = Date.now();
  while (Date.now() - since < quietMs) {
    if (Date.now() > deadline) throw new Error('the data model did not settle');
    await new Promise((r) => setTimeout(r, 200));
    if (double.rdm.changeSets.length !== seen) {
      seen = double.rdm.changeSets.length;
      since = Date.now();
    }
  }
}

export interface ChangeDelays {
  /** From the API's answer (the commit came before it) to the ChangeSet's arrival; below 0 when it came first. */
  all: number[];
  /** From sending the API request to the ChangeSet's arrival (an upper bound of the delay from the commit). */
  fromRequest: number[];
  serviceCreate: number[];
  policyPatch: number[];
}

/**
 * `n` committed changes, one at a time: even ones create a service, odd ones PATCH a service
 * policy's identityRoles (adding, then removing, one identity). Each delay runs from the API's
 * answer (the change is committed) to the double holding the ChangeSet that carries it.
 */
export async function changeDelays(api: Api, double: RouterDouble, o: { n: number; tag: string; policyId: string; identityRoles: string[]; spareIdentityId: string }): Promise<ChangeDelays> {
  const out: ChangeDelays = { all: [], fromRequest: [], serviceCreate: [], policyPatch: [] };
  const carries = (pred: (e: edgeCtrlPb.DataState_Event) => boolean) => (m: { body: Buffer }) => edgeCtrlPb.DataState_ChangeSet.decode(m.body).changes.some(pred);
  for (let i = 0; i < o.n; i++) {
    let match: (m: { body: Buffer }) => boolean;
    let committed: number;
    const sent = performance.now();
    if (i % 2 === 0) {
      const id = await api.mgmt('POST', '/services', { name: `${o.tag}-change-${i}`, roleAttributes: [], encryptionRequired: true });
      committed = performance.now();
      match = carries((e) => e.service?.id === id);
    } else {
      const add = i % 4 === 1;
      const identityRoles = add ? [...o.identityRoles, `@${o.spareIdentityId}`] : o.identityRoles;
      await api.mgmt('PATCH', `/service-policies/${o.policyId}`, { identityRoles }, 200);
      committed = performance.now();
      match = carries((e) => e.servicePolicyChange?.policyId === o.policyId && e.servicePolicyChange.add === add && e.servicePolicyChange.relatedEntityIds.includes(o.spareIdentityId));
    }
    const m = await double.waitFor(EdgeContentType.DataStateChangeSet, match, 30_000).catch((err: Error) => {
      throw new Error(`change ${i} (${i % 2 === 0 ? 'service create' : 'policy PATCH'}): ${err.message}`);
    });
    const at = double.receivedAt.get(m)!;
    const ms = at - committed;
    out.all.push(ms);
    out.fromRequest.push(at - sent);
    (i % 2 === 0 ? out.serviceCreate : out.policyPatch).push(ms);
    await new Promise((r) => setTimeout(r, 20));
  }
  if (o.n % 4 >= 2) {
    // The last PATCH added the identity: take it out again (not measured), so the next run starts alike.
    await api.mgmt('PATCH', `/service-policies/${o.policyId}`, { identityRoles: o.identityRoles }, 200);
    await double.waitFor(EdgeContentType.DataStateChangeSet, carries((e) => e.servicePolicyChange?.policyId === o.policyId && !e.servicePolicyChange.add), 30_000);
  }
  return out;
}

export const fmt = (xs: number[]): string => `p50 ${percentile(xs, 50).toFixed(1)} ms, p99 ${percentile(xs, 99).toFixed(1)} ms`;

/** Renews the double's subscription at the index it holds (routers renew before it lapses; nothing is resent). */
export async function renew(double: RouterDouble): Promise<void> {
  const state = double.rdm.dataStates.at(-1);
  if (!state) return;
  const index = Math.max(Number(state.endIndex), ...double.rdm.changeSets.map((c) => Number(c.index)));
  await double.subscribe({ currentIndex: index, timelineId: state.timelineId, renew: true });
}
