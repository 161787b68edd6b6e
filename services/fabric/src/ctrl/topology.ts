import type { RouterInfo } from '@ziti/proto';
import type { PathRouter } from './paths.js';

interface Remote {
  connectionId: string;
  info: PathRouter;
}

/**
 * The routers connected to the control plane, whichever replica holds them, as paths weigh them:
 * this replica's own routers, and the others' from their `router.connected|disconnected` events
 * (and the presence rows read at start, whose cost is not known: the minimum router cost applies).
 */
export class ConnectedRouters {
  private readonly remote = new Map<string, Remote>();

  constructor(private readonly local: (routerId: string) => RouterInfo | undefined) {}

  get(routerId: string): PathRouter | undefined {
    const l = this.local(routerId);
    if (l) return { cost: Number(l.cost) || 0, noTraversal: l.noTraversal };
    return this.remote.get(routerId)?.info;
  }

  has(routerId: string): boolean {
    return this.get(routerId) !== undefined;
  }

  connected(routerId: string, connectionId: string, info: PathRouter): void {
    this.remote.set(routerId, { connectionId, info });
  }

  /** A connection closed; a newer connection of the same router stays. */
  disconnected(routerId: string, connectionId: string): void {
    const r = this.remote.get(routerId);
    if (r && (!connectionId || r.connectionId === connectionId)) this.remote.delete(routerId);
  }
}
