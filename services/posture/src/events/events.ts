import { newChangeEvent, writeOutboxEvents } from '@ziti/messaging';
import type { Pool } from 'pg';
import type { PostureDataEvents } from '../domain/ports.js';

/** `source` of every event this context publishes (subject `ziti.events.posture.<type>`). */
export const EVENT_SOURCE = 'posture';

/**
 * The events of the posture context, published through its transactional outbox:
 * - `posture-check.created|updated|deleted`: see PostureCheckEvent (domain/ports.ts).
 * - `posture-data.changed` `{ identityId }`: an identity's posture data changed in a way posture
 *   evaluation reads (new OS, domain, MAC or process values, a wake or unlock, MFA state), e.g.
 *   `{ "identityId": "a1b2c3d4e" }`. Repeated identical responses publish nothing.
 */
export function postureDataEvents(pool: Pool, afterCommit: () => void): PostureDataEvents {
  return {
    async changed(identityId) {
      await writeOutboxEvents(pool, [newChangeEvent(EVENT_SOURCE, 'posture-data.changed', { identityId })]);
      afterCommit();
    },
  };
}
