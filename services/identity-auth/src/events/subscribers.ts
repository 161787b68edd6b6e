import type { EventBus, Subscription } from '@ziti/messaging';
import type { AuthenticatorManager } from '../domain/authenticator-manager.js';

/** The durable consumer group of this context (one handler per event across its replicas). */
export const CONSUMER_GROUP = 'identity-auth';

/**
 * pki-enrollment events this context acts on, durably (redelivered until handled; idempotent):
 * - `ca.deleted` `{caId}`: the certificate authenticators the CA issued are deleted, e.g.
 *   `{"type":"ca.deleted","source":"pki-enrollment","data":{"caId":"Xy3.kLm9-"}}`. pki-enrollment
 *   also calls `DeleteCaAuthenticators` when it deletes the CA; this covers a call that failed.
 */
export function subscribePkiEvents(bus: EventBus, authenticators: AuthenticatorManager): Promise<Subscription> {
  return bus.subscribeDurable(CONSUMER_GROUP, 'pki-enrollment', ['ca.deleted'], async (event) => {
    const caId = (event.data as { caId?: unknown }).caId;
    if (typeof caId === 'string' && caId.length > 0) await authenticators.deleteByCa(caId);
  });
}
