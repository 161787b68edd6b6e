import type { ServiceAccess, SessionInfo, TerminatorInfo } from '@ziti/proto';
import type { Peers } from './peers.js';

/** How long an answer about access, a session or a service's terminators is reused. */
export const PEER_ANSWER_TTL_MS = 1000;

interface Entry<T> {
  at: number;
  value: Promise<T>;
}

/** One answer per key for `ttlMs` (concurrent askers share one call; a failed call is not kept). */
class Memo<T> {
  private readonly entries = new Map<string, Entry<T>>();

  constructor(private readonly ttlMs: number) {}

  get(key: string, load: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    const value = load();
    this.entries.set(key, { at: now, value });
    value.catch(() => this.entries.delete(key));
    if (this.entries.size > 50_000) for (const [k, e] of this.entries) if (now - e.at >= this.ttlMs) this.entries.delete(k);
    return value;
  }

  drop(key: string): void {
    this.entries.delete(key);
  }
}

/**
 * The peers with the answers a burst of binds and dials asks again and again kept for a second:
 * an identity's access to a service, a service session's existence, a service's terminators (the
 * last dropped at once when this replica changes a terminator of the service). A revoked access or
 * a deleted session may so still be used for up to that second, as routers use their data model
 * until its change set arrives.
 */
export function cachedPeers(peers: Peers, ttlMs = PEER_ANSWER_TTL_MS): Peers {
  const access = new Memo<ServiceAccess>(ttlMs);
  const sessions = new Memo<SessionInfo | undefined>(ttlMs);
  const terminators = new Memo<TerminatorInfo[]>(ttlMs);
  const serviceOfTerminator = new Map<string, string>();
  const dropTerminator = (id: string) => {
    const service = serviceOfTerminator.get(id);
    if (service) terminators.drop(service);
  };
  return {
    ...peers,
    getServiceAccess: (identityId, serviceId) => access.get(`${identityId}\n${serviceId}`, () => peers.getServiceAccess(identityId, serviceId)),
    getSessions: async (ids) => {
      const found = await Promise.all(ids.map((id) => sessions.get(id, async () => (await peers.getSessions([id]))[0])));
      return found.filter((s): s is SessionInfo => s !== undefined);
    },
    listServiceTerminators: async (serviceId) => {
      const list = await terminators.get(serviceId, () => peers.listServiceTerminators(serviceId));
      for (const t of list) serviceOfTerminator.set(t.id, serviceId);
      return list;
    },
    upsertEdgeTerminator: async (req) => {
      terminators.drop(req.serviceId);
      const t = await peers.upsertEdgeTerminator(req);
      terminators.drop(req.serviceId);
      return t;
    },
    updateTerminator: async (req) => {
      dropTerminator(req.id);
      return peers.updateTerminator(req);
    },
    removeTerminators: async (req) => {
      for (const id of req.terminatorIds) dropTerminator(id);
      const removed = await peers.removeTerminators(req);
      for (const id of removed) dropTerminator(id);
      if (req.allEdge) for (const [id] of serviceOfTerminator) dropTerminator(id);
      return removed;
    },
    close: () => peers.close(),
  };
}
