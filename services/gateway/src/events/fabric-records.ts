import type { ChangeEvent } from '@ziti/messaging';
import type { OpenZitiRecord } from './openziti-records.js';

/**
 * OpenZiti's `router` and `circuit` records (openziti/ziti v2.0.3 `controller/event/routers.go`,
 * `circuits.go`, filled as `controller/events/dispatcher_router.go` and
 * `controller/network/circuit_lifecycle.go` fill them), made from the fabric context's events,
 * which it publishes on the bus directly (best-effort, no outbox):
 *
 * - `router.connected` `{routerId, routerName, at, versionInfo, remoteAddress}` → `router-online`
 * - `router.disconnected` `{routerId, routerName, at, reason}` → `router-offline`
 * - `circuit.created` `{circuitId, clientId, serviceId, terminatorId, instanceId,
 *   creationTimespanNs, path: {nodes, links, ingressId, egressId}, at}` → `created`
 * - `circuit.updated` (the same, plus `durationNs`: a link under it went, the path changed) → `pathUpdated`
 * - `circuit.deleted` (the same, plus `durationNs`) → `deleted`
 * - `circuit.failed` `{circuitId?, clientId, serviceId, instanceId, creationTimespanNs,
 *   failureCause, path?, at}` → `failed`
 * - `link.<type>` `{linkId, srcRouterId, dstRouterId, protocol, dialAddress, cost, …}` → the
 *   `link` record of that type (`routerLinkNew`, `routerLinkKnown`, `routerLinkDisconnectedDest`,
 *   `fault`, `duplicate`; `controller/event/links.go`)
 *
 * Optional, passed through when present: `pathCost` (`path_cost`), `tags` (string values), and
 * the path's `initiatorLocalAddr`, `initiatorRemoteAddr`, `terminatorLocalAddr`,
 * `terminatorRemoteAddr`.
 *
 * Example (`circuit.deleted` of a one-router path):
 * `{"namespace":"circuit","event_src_id":"ctrl1","timestamp":"2026-12-01T10:00:01.500Z","version":2,
 * "event_type":"deleted","circuit_id":"rqrucElFe","client_id":"cm61…","service_id":"3pjM…",
 * "terminator_id":"7Jgr…","instance_id":"","path":{"nodes":["5g2QrZxFcw"],"links":null,
 * "ingress_id":"8dN7","egress_id":"ZnXG"},"link_count":0,"duration":1535040544,
 * "tags":{"serviceId":"3pjM…"}}`
 */

type Data = Record<string, unknown>;

/** OpenZiti's `CircuitEventsVersion`. */
export const CIRCUIT_EVENTS_VERSION = 2;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The fact's own time (`at`), else the event's. */
function timestamp(event: ChangeEvent, d: Data): string {
  return typeof d.at === 'string' && !Number.isNaN(Date.parse(d.at)) ? d.at : event.occurredAt;
}

/** A `time.Duration` in nanoseconds (a non-negative integer, or its decimal text); undefined otherwise. */
function nanos(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return Math.trunc(v);
  if (typeof v === 'string' && /^\d{1,19}$/.test(v)) return Number(v);
  return undefined;
}

/** Go writes a nil slice as `null`: a path without routers or links has `null` there. */
function ids(v: unknown): string[] | null {
  const list = Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  return list.length > 0 ? list : null;
}

/** `RouterEvent`: `router-online` or `router-offline`; name, version, address and reason are not part of it. */
export function routerRecords(event: ChangeEvent, controllerId: string, action: string): OpenZitiRecord[] {
  if (action !== 'connected' && action !== 'disconnected') return [];
  const d = event.data as Data;
  const online = action === 'connected';
  return [
    {
      namespace: 'router',
      timestamp: timestamp(event, d),
      event_src_id: controllerId,
      event_type: online ? 'router-online' : 'router-offline',
      router_id: str(d.routerId),
      router_online: online,
    },
  ];
}

const PATH_ADDRESSES = [
  ['initiatorLocalAddr', 'initiator_local_addr'],
  ['initiatorRemoteAddr', 'initiator_remote_addr'],
  ['terminatorLocalAddr', 'terminator_local_addr'],
  ['terminatorRemoteAddr', 'terminator_remote_addr'],
] as const;

/** `CircuitPath`: nodes and links `null` when empty, the addresses only when known (omitempty). */
function circuitPath(v: unknown): { path: Data; linkCount: number } {
  const p = (v !== null && typeof v === 'object' ? v : {}) as Data;
  const links = ids(p.links);
  const path: Data = { nodes: ids(p.nodes), links, ingress_id: str(p.ingressId), egress_id: str(p.egressId) };
  for (const [from, to] of PATH_ADDRESSES) if (str(p[from])) path[to] = p[from];
  return { path, linkCount: links?.length ?? 0 };
}

/** The circuit's tags (Go's `map[string]string`, keys in order as `encoding/json` writes them); `serviceId` always. */
function circuitTags(v: unknown, serviceId: string): Record<string, string> {
  const given = v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.entries(v as Data).filter((e): e is [string, string] => typeof e[1] === 'string') : [];
  const tags = new Map<string, string>([['serviceId', serviceId], ...given]);
  return Object.fromEntries([...tags].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * `CircuitEvent` (version 2). As OpenZiti: `creation_timespan` on `created` and `failed`,
 * `duration` on `deleted`, `failure_cause` on `failed`, `path_cost` when the cost is known and
 * the circuit is not being deleted (the fabric context reports none unless it sends `pathCost`).
 */
export function circuitRecords(event: ChangeEvent, controllerId: string, action: string): OpenZitiRecord[] {
  if (action !== 'created' && action !== 'updated' && action !== 'deleted' && action !== 'failed') return [];
  const d = event.data as Data;
  const serviceId = str(d.serviceId);
  const { path, linkCount } = circuitPath(d.path);
  const cost = typeof d.pathCost === 'number' && Number.isInteger(d.pathCost) && d.pathCost >= 0 && d.pathCost <= 0xffffffff ? d.pathCost : undefined;
  const record: OpenZitiRecord = {
    namespace: 'circuit',
    event_src_id: controllerId,
    timestamp: timestamp(event, d),
    version: CIRCUIT_EVENTS_VERSION,
    event_type: action === 'updated' ? 'pathUpdated' : action,
    circuit_id: str(d.circuitId),
    client_id: str(d.clientId),
    service_id: serviceId,
    terminator_id: str(d.terminatorId),
    instance_id: str(d.instanceId),
  };
  const lasting = action === 'deleted' || action === 'updated';
  if (!lasting) record.creation_timespan = nanos(d.creationTimespanNs) ?? 0;
  record.path = path;
  record.link_count = linkCount;
  if (!lasting && cost !== undefined) record.path_cost = cost;
  if (action === 'failed' && str(d.failureCause)) record.failure_cause = d.failureCause;
  if (lasting) record.duration = nanos(d.durationNs ?? d.duration) ?? 0;
  record.tags = circuitTags(d.tags, serviceId);
  return [record];
}

/** OpenZiti's link event types, as fabric names its `link.<type>` events. */
export const LINK_EVENT_TYPES = ['routerLinkNew', 'routerLinkKnown', 'routerLinkDisconnectedDest', 'fault', 'duplicate'] as const;

/**
 * `LinkEvent`: `link_id` always; routers, protocol, dial address and a non-zero cost (int32)
 * when known (`omitempty` in OpenZiti).
 */
export function linkRecords(event: ChangeEvent, controllerId: string, action: string): OpenZitiRecord[] {
  if (!(LINK_EVENT_TYPES as readonly string[]).includes(action)) return [];
  const d = event.data as Data;
  const record: OpenZitiRecord = {
    namespace: 'link',
    event_src_id: controllerId,
    timestamp: timestamp(event, d),
    event_type: action,
    link_id: str(d.linkId),
  };
  for (const [from, to] of [['srcRouterId', 'src_router_id'], ['dstRouterId', 'dst_router_id'], ['protocol', 'protocol'], ['dialAddress', 'dial_address']] as const) {
    if (str(d[from])) record[to] = d[from];
  }
  if (typeof d.cost === 'number' && Number.isInteger(d.cost) && d.cost !== 0 && Math.abs(d.cost) <= 0x7fffffff) record.cost = d.cost;
  return [record];
}
