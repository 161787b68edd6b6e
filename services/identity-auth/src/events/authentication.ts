import { type ChangeEvent, type EventBus, newChangeEvent } from '@ziti/messaging';
import type { AuthOutcome, AuthOutcomeListener } from '../domain/authenticator.js';
import { EVENT_SOURCE } from './events.js';

/**
 * `authentication.success` / `authentication.fail`: one login's outcome, for the gateway's
 * OpenZiti-format event stream (`authentication` records, and `apiSession` `created` for a
 * success). Example:
 * `{ "type": "authentication.fail", "source": "identity-auth", "data": { "method": "password",
 *    "remoteAddress": "10.0.0.7", "authenticatorId": "Ab3.x9", "identityId": "a1b2c3d4e",
 *    "authPolicyId": "default", "reason": "could not authenticate, password does not match" } }`
 * A success also has `apiSessionId` and `improperClientCertChain`. No token travels.
 */
export function authenticationEvent(o: AuthOutcome): ChangeEvent<Record<string, unknown>> {
  const { success, ...data } = o;
  return newChangeEvent(EVENT_SOURCE, success ? 'authentication.success' : 'authentication.fail', data);
}

/**
 * Publishes each outcome straight on the bus, not through the outbox: an outbox row, its mark and
 * its publish on every login would tax the hottest path for events OpenZiti itself sends
 * best-effort. The login does not wait for the publish; a failure is logged.
 */
export function authenticationPublisher(bus: EventBus, log: (m: string) => void): AuthOutcomeListener {
  return (outcome) => {
    bus.publish(authenticationEvent(outcome)).catch((err: Error) => log(`authentication event not published: ${err.message}`));
  };
}
