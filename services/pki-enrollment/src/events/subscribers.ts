import type { EventBus, Subscription } from '@ziti/messaging';
import type { EnrollmentManager } from '../domain/enrollments.js';
import type { SessionCertManager } from '../domain/session-certs.js';

/** The durable consumer group of this context (one handler per event across its replicas). */
export const CONSUMER_GROUP = 'pki-enrollment';

/**
 * identity-auth events this context acts on, durably (redelivered until handled; idempotent):
 * - `api-session.deleted` `{apiSessionId}`: the session's certificates are deleted;
 * - `identity.deleted` `{identityId}`: the identity's outstanding enrollments are deleted.
 */
export function subscribeIdentityEvents(bus: EventBus, deps: { sessionCerts: SessionCertManager; enrollments: EnrollmentManager }): Promise<Subscription> {
  return bus.subscribeDurable(CONSUMER_GROUP, 'identity-auth', ['api-session.deleted', 'identity.deleted'], async (event) => {
    const data = event.data as { apiSessionId?: unknown; identityId?: unknown };
    if (event.type === 'api-session.deleted' && typeof data.apiSessionId === 'string') await deps.sessionCerts.sessionEnded(data.apiSessionId);
    if (event.type === 'identity.deleted' && typeof data.identityId === 'string') await deps.enrollments.deleteForIdentity(data.identityId);
  });
}
