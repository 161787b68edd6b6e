import { metricsPb } from '@ziti/channel';
import { metricsText, trackRouterMetrics } from '@ziti/metrics';
import { MAX_METRICS_BYTES, RouterMetrics, decodeMetrics, linkLatencyNs, linkMetricId, routerMetricsEventData, routerSample } from './router-metrics.js';

const histogram = (mean: number) => ({ count: 10, max: mean * 2, mean, min: 0, stdDev: 0, variance: 0, p50: mean, p75: mean, p95: mean, p99: mean * 2, p999: mean * 2, p9999: mean * 2 });
const meter = (m1Rate: number) => ({ count: 1000, m1Rate, m5Rate: 0, m15Rate: 0, meanRate: 0 });

/** A message as an OpenZiti v2.0.3 router's registry reports it. */
function message(o: Partial<metricsPb.MetricsMessage> = {}): metricsPb.MetricsMessage {
  return metricsPb.MetricsMessage.fromPartial({
    eventId: 'e1',
    sourceId: 'r1',
    timestamp: new Date('2026-12-01T10:00:00Z'),
    histograms: { 'link.L1.latency': histogram(2_500_000), 'link.L1.queue_time': histogram(500_000), 'link.L9.latency': histogram(1_000_000) },
    meters: {
      'link.L1.tx.bytesrate': meter(1500),
      'link.L1.rx.bytesrate': meter(700),
      'link.L1.tx.msgrate': meter(3),
      'ingress.tx.bytesrate': meter(20),
      'fabric.rx.bytesrate': meter(30),
      'ctrl.tx.bytesrate:ctrl1': meter(5),
    },
    intValues: { 'edge.connections': 4, 'xgress.acks.queue_size': 0 },
    usageCounters: [
      { intervalStartUTC: 1000, intervalLength: 60, buckets: { c1: { values: { 'ingress.rx': 100, 'ingress.tx': 50 }, tags: {} } } },
      { intervalStartUTC: 1060, intervalLength: 60, buckets: { c1: { values: { 'ingress.rx': 10 }, tags: {} }, c2: { values: { 'fabric.tx': 5, bogus: 7 }, tags: {} } } },
    ],
    ...o,
  });
}
const encode = (m: metricsPb.MetricsMessage) => metricsPb.MetricsMessage.encode(m).finish();

const links: Record<string, { srcRouterId: string; dstRouterId: string }> = { L1: { srcRouterId: 'r1', dstRouterId: 'r2' }, L9: { srcRouterId: 'r7', dstRouterId: 'r8' } };
const ends = (id: string) => links[id];

describe('decodeMetrics', () => {
  it('reads what a router sends', () => {
    const d = decodeMetrics(encode(message()));
    expect(d.ok && d.msg.histograms['link.L1.latency']?.mean).toBe(2_500_000);
  });

  it('refuses garbage, a body past the limit and one with too many values', () => {
    expect(decodeMetrics(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f]))).toEqual({ ok: false, reason: 'malformed' });
    expect(decodeMetrics(new Uint8Array(MAX_METRICS_BYTES + 1))).toEqual({ ok: false, reason: 'oversized' });
    const many = Object.fromEntries(Array.from({ length: 50_001 }, (_, i) => [`m${i}`, i]));
    expect(decodeMetrics(encode(message({ intValues: many })))).toEqual({ ok: false, reason: 'oversized' });
  });
});

describe('link metric names', () => {
  it('finds the link id as OpenZiti does', () => {
    expect(linkMetricId('link.L1.latency')).toEqual({ metric: 'link.latency', linkId: 'L1' });
    expect(linkMetricId('link.a.b.tx.bytesrate')).toEqual({ metric: 'link.tx.bytesrate', linkId: 'a.b' });
    expect(linkMetricId('link.dropped_msgs:L1')).toEqual({ metric: 'link.dropped_msgs', linkId: 'L1' });
    expect(linkMetricId('link.latency')).toBeUndefined();
    expect(linkMetricId('link.tx')).toBeUndefined();
    expect(linkMetricId('ingress.tx.bytesrate')).toBeUndefined();
  });

  it("a link's cost latency is the mean latency plus the mean queue time (ns)", () => {
    expect(linkLatencyNs(message(), 'L1')).toBe(3_000_000);
    expect(linkLatencyNs(message(), 'L9')).toBe(1_000_000);
    expect(linkLatencyNs(message(), 'L2')).toBeUndefined();
    expect(linkLatencyNs(message({ histograms: { 'link.L1.latency': histogram(-5) } }), 'L1')).toBeUndefined();
  });
});

describe('routerSample', () => {
  it("keeps the router's links only, the byte rates, edge connections, active circuits and usage bytes", () => {
    const s = routerSample('r1', message(), ends);
    expect([...s.links]).toEqual([['L1', { latencySeconds: 0.0025, txBytesPerSecond: 1500, rxBytesPerSecond: 700 }]]);
    expect(Object.fromEntries(s.bytesPerSecond)).toEqual({ 'ingress.tx': 20, 'fabric.rx': 30 });
    expect(s.edgeConnections).toBe(4);
    // c1 and c2 carried data in the latest interval (1060); the unknown usage type is not counted.
    expect(s.circuitsWithUsage).toBe(2);
    expect(Object.fromEntries(s.usageBytes)).toEqual({ 'ingress.rx': 110, 'ingress.tx': 50, 'fabric.tx': 5 });
    // The next message adds its usage; without usage the active circuits stay as they were.
    const next = routerSample('r1', message({ usageCounters: [] }), ends, s);
    expect(next.circuitsWithUsage).toBe(2);
    expect(Object.fromEntries(next.usageBytes)).toEqual(Object.fromEntries(s.usageBytes));
    const third = routerSample('r1', message({ usageCounters: [{ intervalStartUTC: 1120, intervalLength: 60, buckets: { c3: { values: { 'egress.tx': 1 }, tags: {} } } }] }), ends, next);
    expect(third.circuitsWithUsage).toBe(1);
    expect(third.usageBytes.get('egress.tx')).toBe(1);
  });
});

describe('routerMetricsEventData', () => {
  const at = new Date('2026-12-01T10:00:00.120Z');

  it('carries the values for metrics, the counters for usage, and the ends of the known links it names', () => {
    const d = routerMetricsEventData('r1', message(), { metrics: true, usage: true }, ends, at, 'batch-1');
    expect(d).toMatchObject({ routerId: 'r1', at: at.toISOString(), sourceEventId: 'batch-1', timestamp: '2026-12-01T10:00:00.000Z' });
    expect(d.links).toEqual({ L1: links.L1, L9: links.L9 });
    expect((d.histograms as Record<string, unknown>)['link.L1.latency']).toEqual(histogram(2_500_000));
    expect(d.usageCounters).toHaveLength(2);
    // It survives the bus (JSON) as it is.
    expect(JSON.parse(JSON.stringify(d))).toEqual(d);
  });

  it('leaves out what no namespace wants; an invalid time is the arrival time', () => {
    const onlyUsage = routerMetricsEventData('r1', message({ timestamp: new Date(Number.NaN) }), { metrics: false, usage: true }, ends, at, 'b');
    expect(onlyUsage).not.toHaveProperty('histograms');
    expect(onlyUsage.timestamp).toBe(at.toISOString());
    expect(routerMetricsEventData('r1', message(), { metrics: true, usage: false }, ends, at, 'b')).not.toHaveProperty('usageCounters');
  });
});

describe('RouterMetrics', () => {
  function setup(events = { metrics: true, usage: false }) {
    const latencies: [string, string, number][] = [];
    const published: Record<string, unknown>[] = [];
    const logs: string[] = [];
    const rm = new RouterMetrics({
      links: { get: ends, latency: (l, r, ns) => void latencies.push([l, r, ns]) },
      events,
      publish: (type, data) => void published.push({ type, ...data }),
      log: (m) => void logs.push(m),
      problem: (m) => void logs.push(m),
    });
    return { rm, latencies, published, logs };
  }

  it("sets the latency of the router's links, publishes one event, and serves Prometheus until the router or link goes", async () => {
    const { rm, latencies, published } = setup();
    const untrack = trackRouterMetrics(() => rm.all());
    try {
      rm.accept('r2', encode(message()));
      // r2 is L1's destination; L9 is not its link.
      expect(latencies).toEqual([['L1', 'r2', 3_000_000]]);
      expect(published).toHaveLength(1);
      expect(published[0]).toMatchObject({ type: 'router.metrics', routerId: 'r2' });
      expect(await metricsText()).toContain('ziti_router_link_latency_seconds{router_id="r2",link_id="L1"} 0.0025');
      rm.linkGone({ id: 'L1', ...links.L1 });
      expect(await metricsText()).not.toContain('link_id="L1"');
      expect(await metricsText()).toContain('ziti_router_edge_connections{router_id="r2"} 4');
      rm.routerGone('r2');
      expect(await metricsText()).not.toContain('router_id="r2"');
    } finally {
      untrack();
    }
  });

  it('drops malformed and oversized messages with one log line each, and publishes nothing without a namespace or when told not to propagate', () => {
    const { rm, latencies, published, logs } = setup({ metrics: false, usage: false });
    rm.accept('r1', Buffer.from([0xff, 0xff]));
    rm.accept('r1', new Uint8Array(MAX_METRICS_BYTES + 10));
    expect(logs).toHaveLength(2);
    expect(logs[0]).toMatch(/router r1: malformed metrics message dropped/);
    expect(logs[1]).toMatch(/router r1: oversized metrics message dropped/);
    rm.accept('r1', encode(message()));
    expect(latencies).toEqual([['L1', 'r1', 3_000_000]]);
    expect(published).toEqual([]);
    const told = setup();
    told.rm.accept('r1', encode(message({ doNotPropagate: true })));
    expect(told.published).toEqual([]);
  });

  it('a link table that throws is one problem line, never an exception', () => {
    const logs: string[] = [];
    const rm = new RouterMetrics({
      links: { get: ends, latency: () => { throw new Error('boom'); } },
      events: { metrics: false, usage: false },
      publish: () => undefined,
      log: (m) => void logs.push(m),
      problem: (m) => void logs.push(m),
    });
    expect(() => rm.accept('r1', encode(message()))).not.toThrow();
    expect(logs).toEqual(['fabric: router r1: metrics message not handled']);
  });
});
