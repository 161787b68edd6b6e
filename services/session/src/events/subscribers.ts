import type { ChangeEvent, EventBus, Subscription } from '@ziti/messaging';
import type { SessionType } from '../domain/model.js';
import type { ServiceUpdates } from '../domain/service-updates.js';
import type { SessionManager } from '../domain/session-manager.js';

/** Durable consumer group of the session context (one replica handles each event). */
export const CONSUMER_GROUP = 'session';

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : []);
const at = (v: unknown, fallback: string): Date => {
  const d = new Date(typeof v === 'string' && v ? v : fallback);
  return Number.isNaN(d.getTime()) ? new Date(fallback) : d;
};

/**
 * The session context's event consumers (durable, idempotent; an event of unknown shape is logged
 * and acknowledged):
 *
 * identity-auth
 * - `api-session.deleted {apiSessionId}`: the API session's sessions end.
 * - `identity.disabled|deleted {identityId}`: the identity's sessions end (a deleted identity's
 *   service-update time is forgotten).
 *
 * policy
 * - `service-access.changed {identityIds, changedAt}`: each identity's `lastChangeAt` moves to
 *   `changedAt`, and its sessions are re-checked (access and posture): those it lost end.
 * - `service.deleted {serviceId}` and `service-access.lost {identityId, serviceId, policyType?}`
 *   (if the policy context publishes them) end the sessions concerned directly.
 *
 * posture
 * - `posture-data.changed {identityId}`: the identity's `lastChangeAt` moves (its posture queries
 *   may have changed) and its sessions created under posture checks are re-checked; those failing end.
 */
export async function subscribeAll(bus: EventBus, sessions: SessionManager, updates: ServiceUpdates, log: (m: string) => void): Promise<Subscription[]> {
  const ignore = (e: ChangeEvent, why: string) => log(`session: ignoring ${e.source}/${e.type} ${e.id}: ${why}`);

  const identityAuth = await bus.subscribeDurable(
    `${CONSUMER_GROUP}-identity-auth`,
    'identity-auth',
    ['api-session.deleted', 'identity.disabled', 'identity.deleted'],
    async (e) => {
      if (e.type === 'api-session.deleted') {
        const apiSessionId = str(e.data?.apiSessionId);
        if (!apiSessionId) return ignore(e, 'no apiSessionId');
        await sessions.apiSessionEnded(apiSessionId);
        return;
      }
      const identityId = str(e.data?.identityId);
      if (!identityId) return ignore(e, 'no identityId');
      await sessions.identityGone(identityId);
      if (e.type === 'identity.deleted') await updates.forget(identityId);
    },
  );

  const policy = await bus.subscribeDurable(`${CONSUMER_GROUP}-policy`, 'policy', ['service-access.changed', 'service.deleted', 'service-access.lost'], async (e) => {
    const d = e.data ?? {};
    switch (e.type) {
      case 'service-access.changed': {
        const ids = strs(d.identityIds);
        const single = str(d.identityId);
        if (single) ids.push(single);
        if (ids.length === 0) return ignore(e, 'no identityIds');
        await updates.changed(ids, at(d.changedAt, e.occurredAt));
        await sessions.revalidateAll(ids);
        return;
      }
      case 'service.deleted': {
        const serviceId = str(d.serviceId);
        if (!serviceId) return ignore(e, 'no serviceId');
        await sessions.serviceGone(serviceId);
        return;
      }
      case 'service-access.lost': {
        const identityId = str(d.identityId);
        const serviceId = str(d.serviceId);
        if (!identityId || !serviceId) return ignore(e, 'no identityId/serviceId');
        const type = d.policyType === 'Dial' || d.policyType === 'Bind' ? (d.policyType as SessionType) : undefined;
        await sessions.serviceAccessLost(identityId, serviceId, type);
        await updates.changed([identityId], at(undefined, e.occurredAt));
        return;
      }
    }
  });

  const posture = await bus.subscribeDurable(`${CONSUMER_GROUP}-posture`, 'posture', ['posture-data.changed'], async (e) => {
    const identityId = str(e.data?.identityId);
    if (!identityId) return ignore(e, 'no identityId');
    await updates.changed([identityId], at(undefined, e.occurredAt));
    await sessions.revalidateAll([identityId], true);
  });

  return [identityAuth, policy, posture];
}
