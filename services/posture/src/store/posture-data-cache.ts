import type { Cache } from '@ziti/messaging';
import type { PostureDataStore } from '../domain/ports.js';
import { type PostureData, emptyPostureData, enforceLimits } from '../domain/posture-data.js';

/** How long an identity's posture data lives after its last write (it is volatile, as in the controller). */
const DATA_TTL_SECONDS = 24 * 3600;
/** Largest document kept per identity and key; beyond it the oldest entries are dropped. */
const MAX_BYTES = 256 * 1024;

const dataKey = (identityId: string) => `posture:data:${identityId}`;
const failedKey = (identityId: string) => `posture:failed:${identityId}`;

function parse(text: string | null): PostureData {
  if (!text) return emptyPostureData();
  try {
    const v = JSON.parse(text) as Partial<PostureData>;
    return { ...v, processes: Array.isArray(v.processes) ? v.processes : [], apiSessions: v.apiSessions && typeof v.apiSessions === 'object' ? v.apiSessions : {} };
  } catch {
    return emptyPostureData();
  }
}

/**
 * Posture data in the shared cache (Redis; in-memory when embedded): one JSON document per
 * identity (`posture:data:<identityId>`) and one list of failed service requests
 * (`posture:failed:<identityId>`), each with a 24 h TTL renewed on write and bounded in size.
 *
 * Read-modify-write is serialised per identity within this process (one chain of promises per
 * identity). Two replicas writing one identity's data in the same instant may lose one of the
 * writes (last writer wins); endpoints resubmit posture periodically, which repairs it.
 */
export class CachePostureDataStore implements PostureDataStore {
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(private readonly cache: Cache) {}

  private serial<T>(identityId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.chains.get(identityId) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.chains.set(identityId, tail);
    void tail.then(() => {
      if (this.chains.get(identityId) === tail) this.chains.delete(identityId);
    });
    return next;
  }

  async get(identityId: string): Promise<PostureData> {
    return parse(await this.cache.get(dataKey(identityId)));
  }

  update<T>(identityId: string, fn: (current: PostureData) => { data: PostureData | null; result: T }): Promise<T> {
    return this.serial(identityId, async () => {
      const { data, result } = fn(await this.get(identityId));
      if (data) await this.cache.set(dataKey(identityId), this.bounded(data), DATA_TTL_SECONDS);
      return result;
    });
  }

  /** The JSON of `data`, dropping the oldest processes and API sessions until it fits MAX_BYTES. */
  private bounded(data: PostureData): string {
    let pd = enforceLimits(data);
    let text = JSON.stringify(pd);
    while (text.length > MAX_BYTES && (pd.processes.length > 0 || Object.keys(pd.apiSessions).length > 0)) {
      pd = {
        ...pd,
        processes: [...pd.processes].sort((a, b) => b.lastUpdatedAt.localeCompare(a.lastUpdatedAt)).slice(0, Math.floor(pd.processes.length / 2)),
        apiSessions: Object.fromEntries(
          Object.entries(pd.apiSessions)
            .sort(([, a], [, b]) => b.touchedAt.localeCompare(a.touchedAt))
            .slice(0, Math.floor(Object.keys(pd.apiSessions).length / 2)),
        ),
      };
      text = JSON.stringify(pd);
    }
    return text;
  }

  async drop(identityId: string): Promise<void> {
    await this.serial(identityId, () => this.cache.del(dataKey(identityId), failedKey(identityId)));
  }

  async failedRequests(identityId: string): Promise<Record<string, unknown>[]> {
    const text = await this.cache.get(failedKey(identityId));
    if (!text) return [];
    try {
      const v = JSON.parse(text) as unknown;
      return Array.isArray(v) ? (v as Record<string, unknown>[]) : [];
    } catch {
      return [];
    }
  }

  addFailedRequest(identityId: string, entry: Record<string, unknown>, max: number): Promise<void> {
    return this.serial(identityId, async () => {
      let list = [...(await this.failedRequests(identityId)), entry].slice(-max);
      let text = JSON.stringify(list);
      while (text.length > MAX_BYTES && list.length > 1) {
        list = list.slice(Math.ceil(list.length / 2));
        text = JSON.stringify(list);
      }
      await this.cache.set(failedKey(identityId), text, DATA_TTL_SECONDS);
    });
  }
}
