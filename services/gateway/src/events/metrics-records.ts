import type { ChangeEvent } from '@ziti/messaging';
import type { OpenZitiRecord } from './openziti-records.js';

/**
 * OpenZiti's `metrics` (version 3) and `usage` (version 3) records (openziti/ziti v2.0.3
 * `controller/event/metrics.go`, `usage.go`, filled as `controller/events/dispatcher_metrics.go`,
 * `metrics_mappers.go` and `dispatcher_usage.go` fill them), made from fabric's
 * `router.metrics` event (one per `MetricsMessage` a router sent; `routerMetricsEventData` of
 * fabric's `ctrl/router-metrics.ts`):
 *
 * - `metrics`: one record per value (`intValue`, `floatValue`, `meter`, `histogram`, `timer`),
 *   `source_id` the router, `source_event_id` shared by the message's records; `ctrl.<name>:<id>`
 *   and `link.<id>.<name>` / `link.<name>:<id>` names are split into `metric` and
 *   `source_entity_id`, and a known link's records carry its `sourceRouterId` and
 *   `targetRouterId` tags.
 * - `usage`: one record per circuit of each usage counter (`usage` by type, the bucket's tags)
 *   and per circuit of each interval counter (`usage` `{<counter name>: n}`, no tags).
 *
 * Example: `{"namespace":"metrics","event_src_id":"ctrl1","timestamp":"2026-12-01T10:00:00.000Z",
 * "metric_type":"histogram","source_id":"5g2QrZxFcw","source_entity_id":"Q3bV","version":3,
 * "metric":"link.latency","metrics":{"count":12,"max":520000,"mean":410000,…},
 * "tags":{"sourceRouterId":"5g2QrZxFcw","targetRouterId":"Zq8x"},"source_event_id":"c41f…"}`
 */

type Data = Record<string, unknown>;

/** OpenZiti's `MetricsEventsVersion`. */
export const METRICS_EVENTS_VERSION = 3;
/** The usage record version this controller writes (OpenZiti's `UsageEventV3`). */
export const USAGE_EVENTS_VERSION = 3;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const obj = (v: unknown): Data => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Data) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const byKey = ([a]: [string, unknown], [b]: [string, unknown]) => (a < b ? -1 : a > b ? 1 : 0);

/** A Go `map[string]string` as `encoding/json` writes it: keys in order, `null` when empty. */
function stringMap(v: unknown): Record<string, string> | null {
  const entries = Object.entries(obj(v)).filter((e): e is [string, string] => typeof e[1] === 'string');
  return entries.length > 0 ? Object.fromEntries(entries.sort(byKey)) : null;
}

/** A Go `map[string]uint64`: non-negative integers, keys in order, `null` when empty. */
function countMap(v: unknown): Record<string, number> | null {
  const entries = Object.entries(obj(v)).filter((e): e is [string, number] => typeof e[1] === 'number' && Number.isInteger(e[1]) && e[1] >= 0);
  return entries.length > 0 ? Object.fromEntries(entries.sort(byKey)) : null;
}

/** The time the router stamped on its message, else the event's. */
function timestamp(event: ChangeEvent, d: Data): string {
  return typeof d.timestamp === 'string' && !Number.isNaN(Date.parse(d.timestamp)) ? d.timestamp : event.occurredAt;
}

const METER: [string, string][] = [['count', 'count'], ['meanRate', 'mean_rate'], ['m1Rate', 'm1_rate'], ['m5Rate', 'm5_rate'], ['m15Rate', 'm15_rate']];
const HISTOGRAM: [string, string][] = [
  ['count', 'count'],
  ['min', 'min'],
  ['max', 'max'],
  ['mean', 'mean'],
  ['stdDev', 'std_dev'],
  ['variance', 'variance'],
  ['p50', 'p50'],
  ['p75', 'p75'],
  ['p95', 'p95'],
  ['p99', 'p99'],
  ['p999', 'p999'],
  ['p9999', 'p9999'],
];

/** The values of one metric, under OpenZiti's keys, in the order `encoding/json` writes a map. */
function values(v: unknown, fields: [string, string][]): Data {
  const o = obj(v);
  return Object.fromEntries(fields.map(([from, to]) => [to, num(o[from])] as [string, number]).sort(byKey));
}

/** `metric` and `source_entity_id` of a name, as OpenZiti's `ctrlChannelMetricsMapper` and `linkMetricsMapper` split them. */
export function splitMetricName(name: string): { metric: string; entityId?: string } {
  if (name.startsWith('ctrl.')) {
    const parts = name.split(':');
    return parts.length > 1 ? { metric: parts[0], entityId: parts[1] } : { metric: name };
  }
  if (!name.startsWith('link.')) return { metric: name };
  const colon = name.split(':');
  if (colon.length === 2) return { metric: colon[0], entityId: colon[1] };
  const parts = name.slice('link.'.length).split('.');
  const suffix = name.endsWith('latency') || name.endsWith('queue_time') ? 1 : 2;
  // OpenZiti would fail on a name this short; it is left whole here.
  if (parts.length <= suffix) return { metric: name };
  return { metric: `link.${parts.slice(parts.length - suffix).join('.')}`, entityId: parts.slice(0, parts.length - suffix).join('.') };
}

/** `MetricsEvent` records of a `router.metrics` event: one per value of the message. */
export function metricsRecords(event: ChangeEvent, controllerId: string): OpenZitiRecord[] {
  const d = obj(event.data);
  const routerId = str(d.routerId);
  const at = timestamp(event, d);
  const sourceEventId = str(d.sourceEventId) || event.id;
  const tags = stringMap(d.tags);
  const links = obj(d.links);
  const out: OpenZitiRecord[] = [];
  const add = (metricType: string, name: string, metrics: Data) => {
    const { metric, entityId } = splitMetricName(name);
    const record: OpenZitiRecord = { namespace: 'metrics', event_src_id: controllerId, timestamp: at, metric_type: metricType, source_id: routerId };
    if (entityId) record.source_entity_id = entityId;
    Object.assign(record, { version: METRICS_EVENTS_VERSION, metric, metrics });
    const link = name.startsWith('link.') && entityId ? obj(links[entityId]) : {};
    const linkTags = str(link.srcRouterId) ? { sourceRouterId: str(link.srcRouterId), targetRouterId: str(link.dstRouterId) } : undefined;
    const all = linkTags ? stringMap({ ...tags, ...linkTags }) : tags;
    if (all) record.tags = all;
    record.source_event_id = sourceEventId;
    out.push(record);
  };
  for (const [name, v] of Object.entries(obj(d.intValues))) if (typeof v === 'number') add('intValue', name, { value: num(v) });
  for (const [name, v] of Object.entries(obj(d.floatValues))) if (typeof v === 'number') add('floatValue', name, { value: num(v) });
  for (const [name, v] of Object.entries(obj(d.meters))) add('meter', name, values(v, METER));
  for (const [name, v] of Object.entries(obj(d.histograms))) add('histogram', name, values(v, HISTOGRAM));
  for (const [name, v] of Object.entries(obj(d.timers))) add('timer', name, values(v, [...METER, ...HISTOGRAM.slice(1)]));
  return out;
}

/** `UsageEventV3` records of a `router.metrics` event: one per circuit of each usage and interval counter. */
export function usageRecords(event: ChangeEvent, controllerId: string): OpenZitiRecord[] {
  const d = obj(event.data);
  const head = { namespace: 'usage' as const, event_src_id: controllerId, timestamp: str(d.at) && !Number.isNaN(Date.parse(str(d.at))) ? str(d.at) : event.occurredAt, version: USAGE_EVENTS_VERSION, source_id: str(d.routerId) };
  const out: OpenZitiRecord[] = [];
  for (const c of list(d.intervalCounters)) {
    const counter = obj(c);
    const name = str(counter.name);
    for (const b of list(counter.buckets)) {
      const bucket = obj(b);
      for (const [circuitId, n] of Object.entries(countMap(bucket.values) ?? {})) {
        out.push({ ...head, circuit_id: circuitId, usage: { [name]: n }, interval_start_utc: num(bucket.intervalStartUTC), interval_length: num(counter.intervalLength), tags: null });
      }
    }
  }
  for (const u of list(d.usageCounters)) {
    const counter = obj(u);
    for (const [circuitId, b] of Object.entries(obj(counter.buckets))) {
      const bucket = obj(b);
      out.push({ ...head, circuit_id: circuitId, usage: countMap(bucket.values), interval_start_utc: num(counter.intervalStartUTC), interval_length: num(counter.intervalLength), tags: stringMap(bucket.tags) });
    }
  }
  return out;
}
