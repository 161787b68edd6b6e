import type { ServiceUpdateStore } from './ports.js';

/**
 * `GET /current-api-session/service-updates`: per identity, when something last changed what it
 * can reach or how. The time moves only with the events that say so (policy access changes,
 * posture data and posture check changes, identity changes the policy context reports); a first
 * read records the current time as the baseline. The time never moves backwards.
 */
export class ServiceUpdates {
  constructor(
    private readonly store: ServiceUpdateStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  lastChangeAt(identityId: string): Promise<Date> {
    return this.store.get(identityId, this.now());
  }

  /** Moves the identities' time to `at` or now, whichever is later (an event processed late still moves it). */
  changed(identityIds: readonly string[], at: Date): Promise<void> {
    const now = this.now();
    return identityIds.length > 0 ? this.store.bump([...new Set(identityIds)], at > now ? at : now) : Promise.resolve();
  }

  forget(identityId: string): Promise<void> {
    return this.store.forget(identityId);
  }
}
