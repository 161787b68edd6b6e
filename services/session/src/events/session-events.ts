import { type EventBus, newChangeEvent } from '@ziti/messaging';
import type { ListRequest, Page, Session, SessionKey, SessionType } from '../domain/model.js';
import type { SessionStore } from '../domain/ports.js';

/** `source` of the events this context publishes. */
export const EVENT_SOURCE = 'session';

/**
 * `session.created` / `session.deleted` `{ sessionId, apiSessionId, identityId, serviceId, type }`,
 * for the gateway's OpenZiti-format event stream (`session` records). Example:
 * `{ "type": "session.created", "source": "session", "data": { "sessionId": "cm3x…",
 *    "apiSessionId": "Xy3.kLm9-", "identityId": "a1b2c3d4e", "serviceId": "s1", "type": "Dial" } }`
 * No token travels.
 */
export function sessionEventData(s: SessionKey): Record<string, unknown> {
  return { sessionId: s.id, apiSessionId: s.apiSessionId, identityId: s.identityId, serviceId: s.serviceId, type: s.type };
}

/**
 * The store, publishing a session's creation and every removal straight on the bus (best-effort,
 * not through the outbox: a session create is a hot path and OpenZiti's session events are
 * best-effort too). Only a row the insert made is `created`; a delete publishes the rows it
 * removed, so a repeated delete (a redelivered event) publishes nothing. Nothing waits for the
 * publish; a failure is logged.
 */
export class PublishingSessionStore implements SessionStore {
  constructor(
    private readonly store: SessionStore,
    private readonly bus: EventBus,
    private readonly log: (m: string) => void,
  ) {}

  async insertOrGet(session: Session): Promise<Session> {
    const stored = await this.store.insertOrGet(session);
    if (stored.id === session.id) this.publish('session.created', [stored]);
    return stored;
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
    this.publish('session.deleted', gone);
    return gone;
  }

  private publish(type: 'session.created' | 'session.deleted', sessions: readonly SessionKey[]): void {
    for (const s of sessions) {
      this.bus.publish(newChangeEvent(EVENT_SOURCE, type, sessionEventData(s))).catch((err: Error) => this.log(`${type} event not published: ${err.message}`));
    }
  }
}
