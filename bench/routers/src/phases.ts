import { randomBytes, randomUUID } from 'node:crypto';
import { EdgeContentType, EdgeHeader, ctrlPb, edgeCtrlPb, getString } from '@ziti/channel';
import type { Api } from '../../common/src/api.js';
import { commitChange, undoSeries } from '../../common/src/changes.js';
import { type Phase, prng, run, runAtRate } from '../../common/src/load.js';
import type { RouterNet } from './network.js';

export interface FullSync {
  /** From the first SubscribeToDataModel (index 0) sent to the last DataState decoded. */
  ms: number;
  /** Each router's time from the first subscription sent to its DataState. */
  perRouterMs: number[];
  /** The DataStates' bodies, all routers together, and one router's. */
  bytes: number;
  bytesEach: number;
  events: number;
}

/** Every double subscribes afresh (a new subscription, index 0, no timeline) at once; the full state must reach them all. */
export async function fullSync(net: RouterNet): Promise<FullSync> {
  const ids = net.doubles.map(() => randomUUID());
  net.doubles.forEach((d, i) => (d.rdm.subscriptionId = ids[i]!));
  const t0 = performance.now();
  await Promise.all(net.doubles.map((d) => d.subscribe({ currentIndex: 0, timelineId: '' })));
  const states = await Promise.all(
    net.doubles.map((d, i) => d.waitFor(EdgeContentType.DataState, (m) => getString(m.headers, EdgeHeader.RouterDataModelSubscriptionId) === ids[i], 120_000)),
  );
  const at = states.map((m, i) => net.doubles[i]!.receivedAt.get(m)! - t0);
  return {
    ms: Math.max(...at),
    perRouterMs: at,
    bytes: states.reduce((s, m) => s + m.body.length, 0),
    bytesEach: states[0]!.body.length,
    events: edgeCtrlPb.DataState.decode(states[0]!.body).events.length,
  };
}

/**
 * One circuit across two hops: spoke i dials the service of spoke j (i ≠ j, both drawn at random),
 * whose terminators are on j only; CreateCircuitV2 → CreateCircuitV2Response, then an ingress
 * Fault tears it down. The doubles answer each Route with success at once.
 */
export function circuitOp(net: RouterNet, seed: number, errors: string[]): () => Promise<boolean> {
  const n = net.routers.length;
  if (n < 3) throw new Error('two-hop circuits need at least three routers (the hub and two spokes)');
  const rnd = prng(seed);
  const peerData = new Map([[1003, randomBytes(32)]]); // the initiator's public key (the services require encryption)
  return async () => {
    const i = 1 + Math.floor(rnd() * (n - 1));
    let j = 1 + Math.floor(rnd() * (n - 2));
    if (j >= i) j++;
    const d = net.doubles[i]!;
    const c = await d.createCircuit({ sessionToken: net.dialTokens[j]!, apiSessionToken: net.userToken, peerData, timeoutMs: 15_000 });
    if (!c.ok) {
      if (errors.length < 5) errors.push(`${String(c.errorCode)} ${c.errorMessage} (router ${i} → ${j})`);
      return false;
    }
    void d.sendFault(ctrlPb.FaultSubject.IngressFault, c.circuitId).catch(() => undefined);
    return true;
  };
}

/** Routes the hub received since `forget`: one per two-hop circuit. */
export const hubRoutes = (net: RouterNet): number => net.doubles[0]!.routes.length;

/** Circuits at a fixed offered rate (open loop). */
export function circuitsAtRate(net: RouterNet, ms: number, perSecond: number, errors: string[]): Promise<Phase & { issued: number }> {
  const op = circuitOp(net, 20261206, errors);
  return runAtRate(ms, perSecond, () => op());
}

/** Circuits as fast as they come with `concurrency` in flight (closed loop). */
export function circuitsClosed(net: RouterNet, ms: number, concurrency: number, errors: string[], seed = 20261207): Promise<Phase> {
  const op = circuitOp(net, seed, errors);
  return run(ms, concurrency, () => op());
}

export interface ChangesToAll {
  /** From the API's answer (the commit came before it) to the last router holding the ChangeSet. */
  last: number[];
  /** The same to the first router. */
  first: number[];
  /** From sending the request to the last router (an upper bound of the delay from the commit). */
  lastFromRequest: number[];
}

/** `n` committed changes, one at a time (a service created, a service policy PATCHed), each awaited at every router. */
export async function changesToAll(api: Api, net: RouterNet, n: number): Promise<ChangesToAll> {
  const out: ChangesToAll = { last: [], first: [], lastFromRequest: [] };
  const target = { tag: `${net.tag}-c`, policyId: net.dialPolicyId, identityRoles: net.dialRoles, spareIdentityId: net.spareIdentityId };
  const atAll = (match: (m: { body: Buffer }) => boolean) =>
    Promise.all(net.doubles.map(async (d) => d.receivedAt.get(await d.waitFor(EdgeContentType.DataStateChangeSet, match, 30_000))!));
  for (let i = 0; i < n; i++) {
    const change = await commitChange(api, i, target);
    const at = await atAll(change.match).catch((err: Error) => {
      throw new Error(`change ${i} (${change.kind}): ${err.message}`);
    });
    out.last.push(Math.max(...at) - change.committed);
    out.first.push(Math.min(...at) - change.committed);
    out.lastFromRequest.push(Math.max(...at) - change.sent);
    await new Promise((r) => setTimeout(r, 20));
  }
  const undo = await undoSeries(api, n, target);
  if (undo) await atAll(undo);
  return out;
}
