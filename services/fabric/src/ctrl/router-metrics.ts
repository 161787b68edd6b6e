import { randomUUID } from 'node:crypto';
import { metricsPb } from '@ziti/channel';
import { type RouterMetricsSample, routerMetricsMessages } from '@ziti/metrics';

/**
 * What routers report in `MetricsMessage` (content type 1007, openziti/metrics v1.4.5; sent by
 * each router every reporting interval, one minute by default) and what it becomes here:
 *
 * - **Link cost**: `link.<id>.latency` (histogram, ns) plus `link.<id>.queue_time` (their means,
 *   as OpenZiti's `Network.AcceptMetricsMsg`) become the link's source or destination latency,
 *   for links the reporting router is an end of.
 * - **Prometheus** (`@ziti/metrics` `RouterMetricsSample`): per link the latency and the tx/rx
 *   byte rates, per router the ingress/egress/fabric byte rates, `edge.connections`, the circuits
 *   with usage in its latest interval and the usage bytes. Only links the router is an end of and
 *   the known meter and usage names are read, so the series are bounded by the live network; they
 *   go when the router disconnects or the link goes.
 * - **Events**: one `router.metrics` bus event per message, only while the event stream wants the
 *   `metrics` or `usage` namespace (`routerMetricsEventData`), never for `doNotPropagate`.
 *
 * The router is the channel's (its certificate), not the message's `sourceId`.
 */

/** The largest message read: a router with many links and circuits reports some hundred KB. */
export const MAX_METRICS_BYTES = 1024 * 1024;
/** The most named values (all kinds, interval and usage buckets included) one message is read for. */
export const MAX_METRIC_ENTRIES = 50_000;
/** The largest `router.metrics` event published (a bus message's limit is 1 MB). */
export const MAX_EVENT_CHARS = 900_000;

const RATE_KINDS = ['ingress', 'egress', 'fabric'] as const;
const DIRECTIONS = ['tx', 'rx'] as const;
/** OpenZiti's usage types (`controller/event/usage.go`). */
export const USAGE_TYPES: ReadonlySet<string> = new Set(['ingress.rx', 'ingress.tx', 'egress.rx', 'egress.tx', 'fabric.rx', 'fabric.tx']);

export type Decoded = { ok: true; msg: metricsPb.MetricsMessage } | { ok: false; reason: 'malformed' | 'oversized' };

const size = (o: object) => Object.keys(o).length;

/** Decodes a 1007 body, refusing one past `MAX_METRICS_BYTES` or `MAX_METRIC_ENTRIES`. */
export function decodeMetrics(body: Uint8Array): Decoded {
  if (body.length > MAX_METRICS_BYTES) return { ok: false, reason: 'oversized' };
  let msg: metricsPb.MetricsMessage;
  try {
    msg = metricsPb.MetricsMessage.decode(body);
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  let entries = size(msg.tags) + size(msg.intValues) + size(msg.floatValues) + size(msg.meters) + size(msg.histograms) + size(msg.timers);
  for (const c of Object.values(msg.intervalCounters)) for (const b of c.buckets) entries += 1 + size(b.values);
  for (const u of msg.usageCounters) for (const b of Object.values(u.buckets)) entries += 1 + size(b.values) + size(b.tags);
  return entries > MAX_METRIC_ENTRIES ? { ok: false, reason: 'oversized' } : { ok: true, msg };
}

/** A link's two routers. */
export interface LinkEnds {
  srcRouterId: string;
  dstRouterId: string;
}

/**
 * The link a metric name is of (`link.<id>.<suffix>` with a one-part suffix for `latency` and
 * `queue_time`, else two parts; `link.<name>:<id>`), as OpenZiti's `linkMetricsMapper` reads it.
 */
export function linkMetricId(name: string): { metric: string; linkId: string } | undefined {
  if (!name.startsWith('link.')) return undefined;
  const colon = name.split(':');
  if (colon.length === 2) return colon[1] ? { metric: colon[0], linkId: colon[1] } : undefined;
  const parts = name.slice('link.'.length).split('.');
  const suffix = name.endsWith('latency') || name.endsWith('queue_time') ? 1 : 2;
  if (parts.length <= suffix) return undefined;
  const linkId = parts.slice(0, parts.length - suffix).join('.');
  return linkId ? { metric: `link.${parts.slice(parts.length - suffix).join('.')}`, linkId } : undefined;
}

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** A link's latency cost (ns) from a router's message: the means of its latency and queue time; undefined without a latency. */
export function linkLatencyNs(msg: metricsPb.MetricsMessage, linkId: string): number | undefined {
  const latency = own(msg.histograms, `link.${linkId}.latency`);
  if (!latency || !finite(latency.mean)) return undefined;
  const queue = own(msg.histograms, `link.${linkId}.queue_time`);
  const ns = Math.trunc(latency.mean + (queue && finite(queue.mean) ? queue.mean : 0));
  return ns >= 0 && ns <= Number.MAX_SAFE_INTEGER ? ns : undefined;
}

function own<T>(map: { [k: string]: T }, key: string): T | undefined {
  return Object.prototype.hasOwnProperty.call(map, key) ? map[key] : undefined;
}

type LinkValues = { latencySeconds?: number; txBytesPerSecond?: number; rxBytesPerSecond?: number };

/** A router's sample, its links' entries removable when a link goes. */
export type RouterSample = RouterMetricsSample & { links: Map<string, LinkValues> };

/**
 * A router's Prometheus sample from its message: links only where `linkEnds` names the router
 * as an end; usage bytes added to the previous sample's; the active circuits kept from it when
 * the message has no usage.
 */
export function routerSample(routerId: string, msg: metricsPb.MetricsMessage, linkEnds: (id: string) => LinkEnds | undefined, previous?: RouterMetricsSample): RouterSample {
  const links = new Map<string, LinkValues>();
  const ofRouter = (linkId: string) => {
    const ends = linkEnds(linkId);
    if (!ends || (ends.srcRouterId !== routerId && ends.dstRouterId !== routerId)) return undefined;
    let v = links.get(linkId);
    if (!v) links.set(linkId, (v = {}));
    return v;
  };
  for (const [name, h] of Object.entries(msg.histograms)) {
    const id = linkMetricId(name);
    if (id?.metric === 'link.latency' && finite(h.mean)) {
      const v = ofRouter(id.linkId);
      if (v) v.latencySeconds = h.mean / 1e9;
    }
  }
  const bytesPerSecond = new Map<string, number>();
  for (const [name, m] of Object.entries(msg.meters)) {
    if (!finite(m.m1Rate)) continue;
    const id = linkMetricId(name);
    if (id?.metric === 'link.tx.bytesrate' || id?.metric === 'link.rx.bytesrate') {
      const v = ofRouter(id.linkId);
      if (v) v[id.metric === 'link.tx.bytesrate' ? 'txBytesPerSecond' : 'rxBytesPerSecond'] = m.m1Rate;
      continue;
    }
    for (const kind of RATE_KINDS) for (const dir of DIRECTIONS) if (name === `${kind}.${dir}.bytesrate`) bytesPerSecond.set(`${kind}.${dir}`, m.m1Rate);
  }
  const edge = own(msg.intValues, 'edge.connections');
  const usageBytes = new Map(previous?.usageBytes ?? []);
  let circuitsWithUsage = previous?.circuitsWithUsage;
  if (msg.usageCounters.length > 0) {
    const latest = msg.usageCounters.reduce((max, u) => Math.max(max, u.intervalStartUTC), -Infinity);
    const active = new Set<string>();
    for (const u of msg.usageCounters) {
      for (const [circuitId, bucket] of Object.entries(u.buckets)) {
        let used = false;
        for (const [type, n] of Object.entries(bucket.values)) {
          if (!USAGE_TYPES.has(type) || !finite(n) || n <= 0) continue;
          usageBytes.set(type, (usageBytes.get(type) ?? 0) + n);
          used = true;
        }
        if (used && u.intervalStartUTC === latest) active.add(circuitId);
      }
    }
    circuitsWithUsage = active.size;
  }
  return { routerId, links, bytesPerSecond, edgeConnections: finite(edge) ? edge : undefined, circuitsWithUsage, usageBytes };
}

/**
 * The data of a `router.metrics` event: the message as the gateway's `metrics` records need it
 * (the values by kind, the tags, the ends of the links its names mention) and, for `usage`, its
 * interval and usage counters.
 *
 * Example: `{"routerId":"5g2QrZxFcw","at":"2026-12-01T10:00:00.012Z","sourceEventId":"c41f…",
 * "timestamp":"2026-12-01T10:00:00.000Z","tags":{},"intValues":{"edge.connections":3},
 * "floatValues":{},"meters":{},"histograms":{"link.Q3bV.latency":{"count":12,"mean":410000,…}},
 * "timers":{},"links":{"Q3bV":{"srcRouterId":"5g2QrZxFcw","dstRouterId":"Zq8x"}},
 * "intervalCounters":[],"usageCounters":[{"intervalStartUTC":1764583140,"intervalLength":60,
 * "buckets":{"gZrStElHY":{"values":{"ingress.rx":47},"tags":{"serviceId":"3pjM…"}}}}]}`
 */
export function routerMetricsEventData(
  routerId: string,
  msg: metricsPb.MetricsMessage,
  want: { metrics: boolean; usage: boolean },
  linkEnds: (id: string) => LinkEnds | undefined,
  at: Date,
  sourceEventId: string,
): Record<string, unknown> {
  const sent = msg.timestamp && Number.isFinite(msg.timestamp.getTime()) ? msg.timestamp : at;
  const data: Record<string, unknown> = { routerId, at: at.toISOString(), sourceEventId, timestamp: sent.toISOString() };
  if (want.metrics) {
    const links: Record<string, LinkEnds> = {};
    for (const name of [...Object.keys(msg.histograms), ...Object.keys(msg.meters), ...Object.keys(msg.timers), ...Object.keys(msg.intValues), ...Object.keys(msg.floatValues)]) {
      const id = linkMetricId(name);
      const ends = id && linkEnds(id.linkId);
      if (ends) links[id.linkId] = { srcRouterId: ends.srcRouterId, dstRouterId: ends.dstRouterId };
    }
    Object.assign(data, { tags: msg.tags, intValues: msg.intValues, floatValues: msg.floatValues, meters: msg.meters, histograms: msg.histograms, timers: msg.timers, links });
  }
  if (want.usage) {
    data.intervalCounters = Object.entries(msg.intervalCounters).map(([name, c]) => ({ name, intervalLength: c.intervalLength, buckets: c.buckets }));
    data.usageCounters = msg.usageCounters;
  }
  return data;
}

export interface RouterMetricsDeps {
  /** The link table: a link's ends, and the latency a router measured (ns) for its cost. */
  links: { get(id: string): LinkEnds | undefined; latency(linkId: string, routerId: string, ns: number): void };
  /** The event-stream namespaces that want the routers' metrics (neither: no `router.metrics` events). */
  events: { metrics: boolean; usage: boolean };
  publish(type: string, data: Record<string, unknown>): void;
  log(m: string): void;
  problem(m: string, err?: unknown): void;
}

/** The metrics of the routers this replica holds: link costs, their Prometheus samples, their events. */
export class RouterMetrics {
  private readonly samples = new Map<string, RouterSample>();

  constructor(private readonly d: RouterMetricsDeps) {}

  /** One 1007 body of a router's channel. Never throws: what cannot be read is dropped with one log line. */
  accept(routerId: string, body: Uint8Array): void {
    try {
      const decoded = decodeMetrics(body);
      if (!decoded.ok) {
        routerMetricsMessages.inc({ outcome: decoded.reason });
        return this.d.log(`fabric: router ${routerId}: ${decoded.reason} metrics message dropped (${body.length} bytes)`);
      }
      routerMetricsMessages.inc({ outcome: 'accepted' });
      const { msg } = decoded;
      const ends = (id: string) => this.d.links.get(id);
      const sample = routerSample(routerId, msg, ends, this.samples.get(routerId));
      this.samples.set(routerId, sample);
      for (const linkId of sample.links.keys()) {
        const ns = linkLatencyNs(msg, linkId);
        if (ns !== undefined) this.d.links.latency(linkId, routerId, ns);
      }
      if (msg.doNotPropagate || !(this.d.events.metrics || this.d.events.usage)) return;
      const data = routerMetricsEventData(routerId, msg, this.d.events, ends, new Date(), randomUUID());
      if (JSON.stringify(data).length > MAX_EVENT_CHARS) return this.d.log(`fabric: router ${routerId}: metrics message too large for an event, not published`);
      this.d.publish('router.metrics', data);
    } catch (err) {
      this.d.problem(`fabric: router ${routerId}: metrics message not handled`, err);
    }
  }

  /** The router's channel closed: its series go. */
  routerGone(routerId: string): void {
    this.samples.delete(routerId);
  }

  /** A link went: its series (of both its routers) go. */
  linkGone(link: { id: string; srcRouterId: string; dstRouterId: string }): void {
    for (const r of [link.srcRouterId, link.dstRouterId]) this.samples.get(r)?.links.delete(link.id);
  }

  /** The samples Prometheus reads (`trackRouterMetrics`). */
  all(): Iterable<RouterMetricsSample> {
    return this.samples.values();
  }
}
