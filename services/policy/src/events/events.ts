import { type ChangeEvent, newChangeEvent } from '@ziti/messaging';
import type { DomainEvent, RdmChange } from '../domain/ports.js';

/** `source` of every event this context publishes (subject `ziti.events.policy.<type>`). */
export const EVENT_SOURCE = 'policy';

/** At most this many identity ids travel in one event (large fan-outs become several events). */
export const IDS_PER_EVENT = 1000;

/** At most this many changes travel in one `router-data-model.changed` event. */
export const RDM_CHANGES_PER_EVENT = 1000;

/**
 * The events of the policy context, published through its transactional outbox after commit.
 *
 * - `service-access.changed` `{ identityIds, changedAt, cause }`: what these identities may reach
 *   or how their services look changed (a service policy, an identity's or a service's role
 *   attributes, a service or one of its configs, an identity's service-config overrides, a posture
 *   check linked to their policies). The session context sets each identity's `lastChangeAt`
 *   (`/current-api-session/service-updates`) to `changedAt`. One change touching many identities
 *   is split into events of at most 1000 ids, all with the same `changedAt`. Example:
 *   `{ "identityIds": ["a1b2c3d4e", "Xy3.kLm9-"], "changedAt": "2026-11-22T10:00:00.000Z", "cause": "service-policy" }`
 * - `router.deleted` `{ routerId, kind }` (kind `edge`, `transit` or `fabric`): pki-enrollment drops
 *   the router's enrollment (it is also told synchronously by `DeleteRouterEnrollment`).
 * - `router-data-model.changed` `{ changes: [{ kind, id }] }`: one per committed transaction that
 *   created, changed or deleted part of the router data model (`GetRouterDataModel`): kind
 *   `config-type`, `config`, `service` (incl. its configs), `service-policy` (incl. what it
 *   selects), `identity` (incl. its service configs) or `posture-check`. Published in commit
 *   order; a signal: the fabric context fetches the model again and diffs. Each change once,
 *   sorted, at most 1000 per event (a larger transaction gives several events in a row). Example:
 *   `{ "changes": [{ "kind": "identity", "id": "a1b2c3d4e" }, { "kind": "service-policy", "id": "Xy3.kLm9-" }] }`
 */
export function toChangeEvents(events: readonly DomainEvent[]): ChangeEvent<Record<string, unknown>>[] {
  const out: ChangeEvent<Record<string, unknown>>[] = [];
  const changedAt = new Date().toISOString();
  const byCause = new Map<string, Set<string>>();
  const rdm = new Map<string, RdmChange>();
  for (const e of events) {
    if (e.type === 'router-data-model.changed') {
      for (const c of e.changes) rdm.set(`${c.kind}\u0000${c.id}`, { kind: c.kind, id: c.id });
      continue;
    }
    if (e.type === 'router.deleted') {
      out.push(newChangeEvent(EVENT_SOURCE, e.type, { routerId: e.routerId, kind: e.kind }));
      continue;
    }
    const set = byCause.get(e.cause) ?? new Set<string>();
    e.identityIds.forEach((id) => set.add(id));
    byCause.set(e.cause, set);
  }
  for (const [cause, set] of byCause) {
    const ids = [...set].sort();
    for (let i = 0; i < ids.length; i += IDS_PER_EVENT) {
      out.push(newChangeEvent(EVENT_SOURCE, 'service-access.changed', { identityIds: ids.slice(i, i + IDS_PER_EVENT), changedAt, cause }));
    }
  }
  const changes = [...rdm.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, c]) => c);
  for (let i = 0; i < changes.length; i += RDM_CHANGES_PER_EVENT) {
    out.push(newChangeEvent(EVENT_SOURCE, 'router-data-model.changed', { changes: changes.slice(i, i + RDM_CHANGES_PER_EVENT) }));
  }
  return out;
}
