import { randomBytes, randomUUID } from 'node:crypto';
import { EdgeContentType, EdgeHeader, edgeCtrlPb, getString } from '@ziti/channel';
import type { RouterDouble } from '../../../test/support/router-double.js';
import type { Api } from '../../common/src/api.js';
import { type ChangeMatch, commitChange, undoSeries } from '../../common/src/changes.js';
import { type Phase, run, runAtRate } from '../../common/src/load.js';
import type { SmallNetwork } from './net.js';

/** One circuit through the double, then (with `fault`) its ingress Fault; false (and the first errors noted) when refused. */
function circuitOp(net: SmallNetwork, fault: boolean, errors: string[]): () => Promise<boolean> {
  const peerData = new Map([[1003, randomBytes(32)]]); // the initiator's public key (the service requires encryption)
  return async () => {
    const c = await net.double.createCircuit({ sessionToken: net.dialToken, apiSessionToken: net.userToken, peerData, timeoutMs: 10_000 });
    if (!c.ok) {
      if (errors.length < 5) errors.push(`${String(c.errorCode)} ${c.errorMessage}`);
      return false;
    }
    if (fault) void net.double.sendFault(0, c.circuitId).catch(() => undefined);
    return true;
  };
}

/** Circuits through the double with `concurrency` in flight (closed loop): CreateCircuitV2 → CreateCircuitV2Response. */
export function circuitPhase(net: SmallNetwork, ms: number, concurrency: number, fault: boolean, errors: string[]): Promise<Phase> {
  return run(ms, concurrency, circuitOp(net, fault, errors));
}

/** The same circuits offered at `perSecond` whatever is in flight (open loop): the latency at that rate. */
export function circuitsAtRate(net: SmallNetwork, ms: number, perSecond: number, fault: boolean, errors: string[]): Promise<Phase & { issued: number }> {
  return runAtRate(ms, perSecond, circuitOp(net, fault, errors));
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
  const arrival = (match: ChangeMatch) => double.waitFor(EdgeContentType.DataStateChangeSet, match, 30_000);
  for (let i = 0; i < o.n; i++) {
    const change = await commitChange(api, i, o);
    const m = await arrival(change.match).catch((err: Error) => {
      throw new Error(`change ${i} (${change.kind}): ${err.message}`);
    });
    const at = double.receivedAt.get(m)!;
    const ms = at - change.committed;
    out.all.push(ms);
    out.fromRequest.push(at - change.sent);
    (change.kind === 'service create' ? out.serviceCreate : out.policyPatch).push(ms);
    await new Promise((r) => setTimeout(r, 20));
  }
  const undo = await undoSeries(api, o.n, o);
  if (undo) await arrival(undo);
  return out;
}
