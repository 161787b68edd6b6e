import type { ChangeEvent, EventBus, Subscription } from '@ziti/messaging';
import type { PostureManager } from '../domain/posture-manager.js';

/** Durable consumer group of the posture context (one replica handles each event). */
export const CONSUMER_GROUP = 'posture';

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * Consumes identity-auth's lifecycle events: `api-session.deleted {apiSessionId, identityId}`
 * drops the API session's MFA and endpoint state; `identity.deleted {identityId}` drops the
 * identity's posture data and failed service requests. Handlers are idempotent; an event of
 * unknown shape is logged and acknowledged.
 */
export async function subscribeLifecycle(bus: EventBus, posture: PostureManager, log: (m: string) => void): Promise<Subscription> {
  return bus.subscribeDurable(CONSUMER_GROUP, 'identity-auth', ['api-session.deleted', 'identity.deleted'], async (event: ChangeEvent) => {
    const identityId = str(event.data?.identityId);
    if (!identityId) {
      log(`posture: ignoring ${event.source}/${event.type} ${event.id} without identityId`);
      return;
    }
    if (event.type === 'identity.deleted') return posture.identityDeleted(identityId);
    const apiSessionId = str(event.data?.apiSessionId);
    if (apiSessionId) await posture.apiSessionEnded(identityId, apiSessionId);
    else log(`posture: ignoring ${event.type} ${event.id} without apiSessionId`);
  });
}
