import { edgeCtrlPb } from '@ziti/channel';
import type { Api } from './api.js';

/** Which committed change a ChangeSet carries. */
export type ChangeMatch = (m: { body: Buffer }) => boolean;

export interface CommittedChange {
  kind: 'service create' | 'policy PATCH';
  /** When the request went out and when its answer came (the commit came before it), `performance.now()`. */
  sent: number;
  committed: number;
  /** True for the ChangeSet that carries this change. */
  match: ChangeMatch;
}

export interface ChangeTarget {
  tag: string;
  /** A service policy whose identityRoles the odd changes PATCH. */
  policyId: string;
  identityRoles: string[];
  /** An identity no policy selects: added to the policy and removed again. */
  spareIdentityId: string;
}

export const carries = (pred: (e: edgeCtrlPb.DataState_Event) => boolean): ChangeMatch => (m) => edgeCtrlPb.DataState_ChangeSet.decode(m.body).changes.some(pred);

/**
 * The `i`-th committed change of a series: even ones create a service, odd ones PATCH the
 * policy's identityRoles (adding the spare identity when i % 4 is 1, removing it when 3).
 */
export async function commitChange(api: Api, i: number, o: ChangeTarget): Promise<CommittedChange> {
  const sent = performance.now();
  if (i % 2 === 0) {
    const id = await api.mgmt('POST', '/services', { name: `${o.tag}-change-${i}`, roleAttributes: [], encryptionRequired: true });
    return { kind: 'service create', sent, committed: performance.now(), match: carries((e) => e.service?.id === id) };
  }
  const add = i % 4 === 1;
  const identityRoles = add ? [...o.identityRoles, `@${o.spareIdentityId}`] : o.identityRoles;
  await api.mgmt('PATCH', `/service-policies/${o.policyId}`, { identityRoles }, 200);
  const match = carries((e) => e.servicePolicyChange?.policyId === o.policyId && e.servicePolicyChange.add === add && e.servicePolicyChange.relatedEntityIds.includes(o.spareIdentityId));
  return { kind: 'policy PATCH', sent, committed: performance.now(), match };
}

/** After a series of `n`: when its last PATCH added the spare identity, the change that takes it out again (not measured), so the next series starts alike. */
export async function undoSeries(api: Api, n: number, o: ChangeTarget): Promise<ChangeMatch | undefined> {
  if (n % 4 < 2) return undefined;
  await api.mgmt('PATCH', `/service-policies/${o.policyId}`, { identityRoles: o.identityRoles }, 200);
  return carries((e) => e.servicePolicyChange?.policyId === o.policyId && !e.servicePolicyChange.add);
}
