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

  /**
   * Converges on the presence rows (at start, and now and then: an event missed): routers
   * connected elsewhere that are not known here are added (weighed by `info`), and those no
   * longer connected anywhere go.
   */
  async sync(connected: readonly { routerId: string; connectionId: string }[], info: (routerId: string) => Promise<PathRouter>): Promise<void> {
    const live = new Set(connected.map((r) => r.routerId));
    for (const id of [...this.remote.keys()]) if (!live.has(id)) this.remote.delete(id);
    for (const r of connected) {
      if (this.local(r.routerId) || this.remote.get(r.routerId)?.connectionId === r.connectionId) continue;
      this.remote.set(r.routerId, { connectionId: r.connectionId, info: await info(r.routerId) });
    }
  }

  /** A connection closed; a newer connection of the same router stays. */
  disconnected(routerId: string, connectionId: string): void {
    const r = this.remote.get(routerId);
    if (r && (!connectionId || r.connectionId === connectionId)) this.remote.delete(routerId);
  }
}
