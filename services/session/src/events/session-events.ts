import { type EventBus, newChangeEvent } from '@ziti/messaging';
import type { ListRequest, Page, Session, SessionKey, SessionType } from '../domain/model.js';
import type { SessionStore } from '../domain/ports.js';

/** `source` of the events this context publishes. */
export const EVENT_SOURCE = 'session';

/**
 * `session.deleted` `{ sessionId, apiSessionId, identityId, serviceId, type }`, for the gateway's
 * OpenZiti-format event stream (`session` records). Example:
 * `{ "type": "session.deleted", "source": "session", "data": { "sessionId": "cm3x…",
 *    "apiSessionId": "Xy3.kLm9-", "identityId": "a1b2c3d4e", "serviceId": "s1", "type": "Dial" } }`
 * No token travels. (A create is handed to the gateway on its answer instead: see `sessionHandlers`.)
 */
export function sessionEventData(s: SessionKey): Record<string, unknown> {
  return { sessionId: s.id, apiSessionId: s.apiSessionId, identityId: s.identityId, serviceId: s.serviceId, type: s.type };
}

/**
 * The store, publishing every removal straight on the bus (best-effort, not through the outbox, as
 * OpenZiti's session events are best-effort): a delete publishes the rows it removed, so a repeated
 * delete (a redelivered event) publishes nothing. Nothing waits for the publish; a failure is logged.
 */
export class PublishingSessionStore implements SessionStore {
  constructor(
    private readonly store: SessionStore,
    private readonly bus: EventBus,
    private readonly log: (m: string) => void,
  ) {}

  insertOrGet(session: Session): Promise<Session> {
    return this.store.insertOrGet(session);
  }

  deleteById(id: string): Promise<SessionKey[]> {
    return this.deleted(this.store.deleteById(id));
  }

  deleteByApiSession(apiSessionId: string): Promise<SessionKey[]> {
    return this.deleted(this.store.deleteByApiSession(apiSessionId));
  }

  deleteByIdentity(identityId: string): Promise<SessionKey[]> {
    return this.deleted(this.store.deleteByIdentity(identityId));
  }

  deleteByService(serviceId: string): Promise<SessionKey[]> {
    return this.deleted(this.store.deleteByService(serviceId));
  }

  deleteByIdentityAndService(identityId: string, serviceId: string, type?: SessionType): Promise<SessionKey[]> {
    return this.deleted(this.store.deleteByIdentityAndService(identityId, serviceId, type));
  }

  findExisting(apiSessionId: string, serviceId: string, type: SessionType): Promise<Session | null> {
    return this.store.findExisting(apiSessionId, serviceId, type);
  }

  findById(id: string): Promise<Session | null> {
    return this.store.findById(id);
  }

  list(req: ListRequest, identityId?: string): Promise<Page<Session>> {
    return this.store.list(req, identityId);
  }

  identitiesWithPostureSessions(): Promise<string[]> {
    return this.store.identitiesWithPostureSessions();
  }

  exclusively(name: string, fn: () => Promise<void>): Promise<boolean> {
    return this.store.exclusively(name, fn);
  }

  ofIdentities(identityIds: readonly string[], onlyWithPosture?: boolean): Promise<Session[]> {
    return this.store.ofIdentities(identityIds, onlyWithPosture);
  }

  private async deleted(removal: Promise<SessionKey[]>): Promise<SessionKey[]> {
    const gone = await removal;
    for (const s of gone) {
      this.bus
        .publish(newChangeEvent(EVENT_SOURCE, 'session.deleted', sessionEventData(s)))
        .catch((err: Error) => this.log(`session.deleted event not published: ${err.message}`));
    }
    return gone;
  }
}
