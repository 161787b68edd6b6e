import type { ctrlPb } from '@ziti/channel';
import type { Pool } from 'pg';

export type { VersionInfo } from '@ziti/channel';
import type { VersionInfo } from '@ziti/channel';

export interface Presence {
  routerId: string;
  connected: boolean;
  isEdge: boolean;
  syncStatus: string;
  hostname: string;
  supportedProtocols: Record<string, string>;
  versionInfo?: VersionInfo;
  listenerAddresses: string[];
  connectedAt?: Date;
}

/** `fabric.router_presence`: what each router's channel told, written by the replica holding it. */
export class PresenceStore {
  constructor(
    private readonly pool: Pool,
    private readonly replica: string,
  ) {}

  async connected(p: {
    routerId: string;
    connectionId: string;
    isEdge: boolean;
    versionInfo: VersionInfo;
    listenerAddresses: string[];
    linkListeners: ctrlPb.Listener[];
    remoteAddress: string;
    syncStatus: string;
  }): Promise<void> {
    await this.pool.query(
      `INSERT INTO router_presence (router_id, connected, is_edge, sync_status, hostname, supported_protocols, version_info, listener_addresses, link_listeners, remote_address, connection_id, replica, connected_at, disconnected_at)
       VALUES ($1, true, $2, $3, '', '{}', $4, $5, $9, $6, $7, $8, now(), NULL)
       ON CONFLICT (router_id) DO UPDATE SET connected = true, is_edge = $2, sync_status = $3, hostname = '', supported_protocols = '{}',
         version_info = $4, listener_addresses = $5, link_listeners = $9, remote_address = $6, connection_id = $7, replica = $8, connected_at = now(), disconnected_at = NULL`,
      [p.routerId, p.isEdge, p.syncStatus, JSON.stringify(p.versionInfo), p.listenerAddresses, p.remoteAddress, p.connectionId, this.replica, JSON.stringify(p.linkListeners)],
    );
  }

  /** Every router connected to any replica, with its current connection. */
  async connectedRouters(): Promise<{ routerId: string; connectionId: string }[]> {
    const { rows } = await this.pool.query<{ router_id: string; connection_id: string }>('SELECT router_id, connection_id FROM router_presence WHERE connected');
    return rows.map((r) => ({ routerId: r.router_id, connectionId: r.connection_id }));
  }

  /** Every connected router but `exceptId`, with what its peers need to dial it (PeerStateChanges). */
  async connectedPeers(exceptId: string): Promise<{ routerId: string; version: string; linkListeners: ctrlPb.Listener[] }[]> {
    const { rows } = await this.pool.query<{ router_id: string; version_info: VersionInfo | null; link_listeners: ctrlPb.Listener[] | null }>(
      'SELECT router_id, version_info, link_listeners FROM router_presence WHERE connected AND router_id <> $1',
      [exceptId],
    );
    return rows.map((r) => ({ routerId: r.router_id, version: r.version_info?.version ?? '', linkListeners: r.link_listeners ?? [] }));
  }

  /** Whether the router's current connection (any replica's) is another than `connectionId`. */
  async heldElsewhere(routerId: string, connectionId: string): Promise<boolean> {
    const { rows } = await this.pool.query('SELECT 1 FROM router_presence WHERE router_id = $1 AND connected AND connection_id <> $2', [routerId, connectionId]);
    return rows.length > 0;
  }

  /** The router's ClientHello or a sync step; only while the same connection holds it. */
  async update(routerId: string, connectionId: string, fields: { syncStatus?: string; hostname?: string; supportedProtocols?: Record<string, string> }): Promise<void> {
    await this.pool.query(
      `UPDATE router_presence SET sync_status = COALESCE($3, sync_status), hostname = COALESCE($4, hostname), supported_protocols = COALESCE($5::jsonb, supported_protocols)
       WHERE router_id = $1 AND connection_id = $2`,
      [routerId, connectionId, fields.syncStatus ?? null, fields.hostname ?? null, fields.supportedProtocols ? JSON.stringify(fields.supportedProtocols) : null],
    );
  }

  /** The connection closed (a newer connection of the same router is left alone). */
  async disconnected(routerId: string, connectionId: string): Promise<void> {
    await this.pool.query(
      `UPDATE router_presence SET connected = false, sync_status = 'SYNC_UNKNOWN', disconnected_at = now() WHERE router_id = $1 AND connection_id = $2`,
      [routerId, connectionId],
    );
  }

  async states(routerIds: readonly string[]): Promise<Presence[]> {
    const { rows } = await this.pool.query<{
      router_id: string;
      connected: boolean;
      is_edge: boolean;
      sync_status: string;
      hostname: string;
      supported_protocols: Record<string, string>;
      version_info: VersionInfo | null;
      listener_addresses: string[];
      connected_at: Date | null;
    }>('SELECT * FROM router_presence WHERE router_id = ANY($1::text[])', [routerIds]);
    const byId = new Map(rows.map((r) => [r.router_id, r]));
    return routerIds.map((routerId) => {
      const r = byId.get(routerId);
      if (!r || !r.connected) return { routerId, connected: false, isEdge: false, syncStatus: 'SYNC_UNKNOWN', hostname: '', supportedProtocols: {}, listenerAddresses: [], versionInfo: r?.version_info ?? undefined };
      return {
        routerId,
        connected: true,
        isEdge: r.is_edge,
        syncStatus: r.sync_status,
        hostname: r.hostname,
        supportedProtocols: r.supported_protocols ?? {},
        versionInfo: r.version_info ?? undefined,
        listenerAddresses: r.listener_addresses ?? [],
        connectedAt: r.connected_at ?? undefined,
      };
    });
  }

  /** Identities an edge router reported (heartbeats): remembered with the router and time. */
  async identitiesSeen(routerId: string, identityIds: readonly string[]): Promise<void> {
    if (identityIds.length === 0) return;
    await this.pool.query(
      `INSERT INTO identity_connections (identity_id, router_id, seen_at) SELECT unnest($1::text[]), $2, now()
       ON CONFLICT (identity_id) DO UPDATE SET router_id = EXCLUDED.router_id, seen_at = EXCLUDED.seen_at`,
      [[...new Set(identityIds)], routerId],
    );
  }

  /** Of the given identities, those seen by a router that is still connected within `withinSeconds`. */
  async connectedIdentities(identityIds: readonly string[], withinSeconds: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ identity_id: string }>(
      `SELECT c.identity_id FROM identity_connections c JOIN router_presence p ON p.router_id = c.router_id AND p.connected
       WHERE c.identity_id = ANY($1::text[]) AND c.seen_at > now() - make_interval(secs => $2)`,
      [identityIds, withinSeconds],
    );
    return rows.map((r) => r.identity_id);
  }
}
