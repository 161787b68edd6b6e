import type { ChangeEvent } from '@ziti/messaging';
import { subscriptionsFor } from './event-stream.js';
import { splitMetricName } from './metrics-records.js';
import { toRecords } from './openziti-records.js';

/**
 * The shapes follow openziti/ziti v2.0.3: `MetricsEvent` (`namespace` metrics, `event_src_id`,
 * `timestamp`, `metric_type`, `source_id`, `source_entity_id` omitempty, `version` 3, `metric`,
 * `metrics`, `tags` omitempty, `source_event_id`) as `dispatcher_metrics.go` and
 * `metrics_mappers.go` fill it, and `UsageEventV3` (`namespace` usage, `event_src_id`,
 * `timestamp`, `version` 3, `source_id`, `circuit_id`, `usage`, `interval_start_utc`,
 * `interval_length`, `tags`) as `dispatcher_usage.go` fills it.
 */

const src = { controllerId: 'ctrl-1', version: 'v1.2.3' };
const occurredAt = '2026-12-01T10:00:05.000Z';
const at = '2026-12-01T10:00:00.120Z';
const sent = '2026-12-01T10:00:00.000Z';
const ev = (data: Record<string, unknown>, type = 'router.metrics'): ChangeEvent => ({ id: 'evt-1', source: 'fabric', type, occurredAt, data });

const histogram = { count: 12, max: 520000, mean: 410000, min: 300000, stdDev: 2.5, variance: 6.25, p50: 400000, p75: 450000, p95: 500000, p99: 510000, p999: 520000, p9999: 520000 };
const meter = { count: 9000, m1Rate: 150.5, m5Rate: 140, m15Rate: 130, meanRate: 120 };

const metricsData = {
  routerId: 'r1',
  at,
  sourceEventId: 'batch-1',
  timestamp: sent,
  tags: { region: 'eu' },
  intValues: { 'edge.connections': 3 },
  floatValues: { 'some.ratio': 0.25 },
  meters: { 'link.L1.tx.bytesrate': meter, 'ctrl.tx.bytesrate:ctrlA': meter, 'ingress.rx.bytesrate': meter },
  histograms: { 'link.L1.latency': histogram, 'link.unknown.latency': histogram },
  timers: { 'xgress_edge_tunnel.terminator.create_timer': { ...histogram, ...meter } },
  links: { L1: { srcRouterId: 'r1', dstRouterId: 'r2' } },
};

describe('metrics', () => {
  const records = toRecords(ev(metricsData), src);
  const of = (metric: string, entity?: string) => records.filter((r) => r.namespace === 'metrics' && r.metric === metric && r.source_entity_id === entity);

  it('one record per reported value, all sharing the source event id and the router as source', () => {
    expect(records).toHaveLength(8);
    for (const r of records) expect(r).toMatchObject({ namespace: 'metrics', event_src_id: 'ctrl-1', timestamp: sent, source_id: 'r1', version: 3, source_event_id: 'batch-1' });
  });

  it("a link's histogram: the link id is the entity, its routers are tags, the values under OpenZiti's keys", () => {
    const [latency] = of('link.latency', 'L1');
    expect(latency).toEqual({
      namespace: 'metrics',
      event_src_id: 'ctrl-1',
      timestamp: sent,
      metric_type: 'histogram',
      source_id: 'r1',
      source_entity_id: 'L1',
      version: 3,
      metric: 'link.latency',
      metrics: { count: 12, max: 520000, mean: 410000, min: 300000, p50: 400000, p75: 450000, p95: 500000, p99: 510000, p999: 520000, p9999: 520000, std_dev: 2.5, variance: 6.25 },
      tags: { region: 'eu', sourceRouterId: 'r1', targetRouterId: 'r2' },
      source_event_id: 'batch-1',
    });
    // The keys in the order OpenZiti's struct writes them; the values' keys as encoding/json sorts a map.
    expect(Object.keys(latency!)).toEqual(['namespace', 'event_src_id', 'timestamp', 'metric_type', 'source_id', 'source_entity_id', 'version', 'metric', 'metrics', 'tags', 'source_event_id']);
    expect(Object.keys(latency!.metrics as object)).toEqual([...Object.keys(latency!.metrics as object)].sort());
    // A link fabric does not know keeps the message's tags only.
    expect(of('link.latency', 'unknown')[0]!.tags).toEqual({ region: 'eu' });
  });

  it('meters, timers and values; ctrl.<name>:<id> names split as OpenZiti does', () => {
    expect(of('link.tx.bytesrate', 'L1')[0]).toMatchObject({ metric_type: 'meter', metrics: { count: 9000, m1_rate: 150.5, m5_rate: 140, m15_rate: 130, mean_rate: 120 } });
    expect(of('ctrl.tx.bytesrate', 'ctrlA')[0]).toMatchObject({ metric_type: 'meter', tags: { region: 'eu' } });
    expect(of('ingress.rx.bytesrate')[0]).not.toHaveProperty('source_entity_id');
    expect(of('edge.connections')[0]).toMatchObject({ metric_type: 'intValue', metrics: { value: 3 } });
    expect(of('some.ratio')[0]).toMatchObject({ metric_type: 'floatValue', metrics: { value: 0.25 } });
    const timer = of('xgress_edge_tunnel.terminator.create_timer')[0]!;
    expect(timer.metric_type).toBe('timer');
    expect(Object.keys(timer.metrics as object)).toEqual(['count', 'm15_rate', 'm1_rate', 'm5_rate', 'max', 'mean', 'mean_rate', 'min', 'p50', 'p75', 'p95', 'p99', 'p999', 'p9999', 'std_dev', 'variance']);
  });

  it('no tags: the field is left out (omitempty); a message without a valid time takes the event time', () => {
    const [r] = toRecords(ev({ routerId: 'r1', at, timestamp: 'never', intValues: { x: 1 } }), src);
    expect(r).not.toHaveProperty('tags');
    expect(r!.timestamp).toBe(occurredAt);
    expect(r!.source_event_id).toBe('evt-1');
  });

  it('splits names as OpenZiti mappers do, and leaves names too short to split whole', () => {
    expect(splitMetricName('link.L1.latency')).toEqual({ metric: 'link.latency', entityId: 'L1' });
    expect(splitMetricName('link.L1.queue_time')).toEqual({ metric: 'link.queue_time', entityId: 'L1' });
    expect(splitMetricName('link.a.b.rx.msgrate')).toEqual({ metric: 'link.rx.msgrate', entityId: 'a.b' });
    expect(splitMetricName('link.dropped_msgs:L1')).toEqual({ metric: 'link.dropped_msgs', entityId: 'L1' });
    expect(splitMetricName('ctrl.rx.msgsize:r9')).toEqual({ metric: 'ctrl.rx.msgsize', entityId: 'r9' });
    expect(splitMetricName('link.x')).toEqual({ metric: 'link.x' });
    expect(splitMetricName('link.latency')).toEqual({ metric: 'link.latency' });
    expect(splitMetricName('fabric.tx.bytesrate')).toEqual({ metric: 'fabric.tx.bytesrate' });
  });

  it('hostile shapes make no records and never throw', () => {
    expect(toRecords(ev({ routerId: 'r1', intValues: 'x', meters: [1], histograms: null, timers: { t: 'no' } }), src)).toEqual([
      expect.objectContaining({ metric: 't', metrics: expect.objectContaining({ count: 0, mean: 0 }) }),
    ]);
    expect(toRecords(ev({}), src)).toEqual([]);
  });
});

describe('usage', () => {
  it('one version 3 record per circuit of each usage counter, with the bucket tags (null without)', () => {
    const records = toRecords(
      ev({
        routerId: 'r1',
        at,
        timestamp: sent,
        usageCounters: [
          {
            intervalStartUTC: 1764583140,
            intervalLength: 60,
            buckets: {
              c1: { values: { 'ingress.rx': 47, 'ingress.tx': 95 }, tags: { serviceId: 's1', clientId: 'cl1', hostId: 'h1' } },
              c2: { values: { 'fabric.tx': 10 }, tags: {} },
            },
          },
        ],
        intervalCounters: [{ name: 'fabricUsage', intervalLength: 60, buckets: [{ intervalStartUTC: 1764583080, values: { c3: 5 } }] }],
      }),
      src,
    );
    expect(records).toEqual([
      { namespace: 'usage', event_src_id: 'ctrl-1', timestamp: at, version: 3, source_id: 'r1', circuit_id: 'c3', usage: { fabricUsage: 5 }, interval_start_utc: 1764583080, interval_length: 60, tags: null },
      {
        namespace: 'usage',
        event_src_id: 'ctrl-1',
        timestamp: at,
        version: 3,
        source_id: 'r1',
        circuit_id: 'c1',
        usage: { 'ingress.rx': 47, 'ingress.tx': 95 },
        interval_start_utc: 1764583140,
        interval_length: 60,
        tags: { clientId: 'cl1', hostId: 'h1', serviceId: 's1' },
      },
      { namespace: 'usage', event_src_id: 'ctrl-1', timestamp: at, version: 3, source_id: 'r1', circuit_id: 'c2', usage: { 'fabric.tx': 10 }, interval_start_utc: 1764583140, interval_length: 60, tags: null },
    ]);
    expect(Object.keys(records[1]!)).toEqual(['namespace', 'event_src_id', 'timestamp', 'version', 'source_id', 'circuit_id', 'usage', 'interval_start_utc', 'interval_length', 'tags']);
  });

  it('a metrics event without usage makes no usage records; hostile counters make none and never throw', () => {
    expect(toRecords(ev(metricsData), src).some((r) => r.namespace === 'usage')).toBe(false);
    expect(toRecords(ev({ routerId: 'r1', usageCounters: 'x', intervalCounters: [null, { buckets: 'no' }] }), src)).toEqual([]);
  });
});

describe('subscriptions', () => {
  it('metrics and usage are made from fabric router.metrics', () => {
    expect(subscriptionsFor(['metrics'])).toEqual([['fabric', ['router.metrics']]]);
    expect(subscriptionsFor(['usage', 'router'])).toEqual([['fabric', ['router.connected', 'router.disconnected', 'router.metrics']]]);
  });
});
