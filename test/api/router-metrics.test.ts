// What routers report in their metrics messages (1007): link costs, Prometheus series labelled by
// router and link, OpenZiti's metrics and usage records; malformed reports change nothing.
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ctrlPb, type metricsPb } from '@ziti/channel';
import type { EdgeApi } from '../support/clients.js';
import { useController } from '../support/controller.js';
import { type MetricFamily, parsePrometheusText, sampleSum } from '../support/prom-text.js';
import type { RouterDouble } from '../support/router-double.js';
import type { RouterIdentity } from '../support/router-enroll.js';
import { connectRouter, enrolledRouter, fabricGet, poll } from '../support/router-fixtures.js';

type Rec = Record<string, any>;
const eventsFile = path.join(os.tmpdir(), `ziti-events-router-metrics-${process.pid}-${Date.now()}.jsonl`);
const ctl = useController({ metricsPort: 0, events: { namespaces: ['metrics', 'usage'], file: eventsFile, entityCountIntervalMs: 60_000 } });

let mgmt: EdgeApi;
const ids: Record<'a' | 'b', RouterIdentity> = {} as never;
const dbl: Partial<Record<'a' | 'b', RouterDouble>> = {};
const linkId = randomUUID();

type LinkRow = { id: string; cost: number; sourceLatency: number; destLatency: number };
const linkRow = async () => ((await fabricGet(ctl(), mgmt, '/links?limit=500')) as LinkRow[]).find((l) => l.id === linkId);
const listener = (port: number): ctrlPb.Listener => ({ address: `tls:127.0.0.1:${port}`, protocol: 'tls', costTags: [], groups: ['default'], localBinding: '' });

function scrape(): Promise<Map<string, MetricFamily>> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: ctl().running.metricsPort, path: '/metrics' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => (res.statusCode === 200 ? resolve(parsePrometheusText(Buffer.concat(chunks).toString('utf8'))) : reject(new Error(`metrics: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });
}
const series = (f: Map<string, MetricFamily>, name: string, labels: Record<string, string>) =>
  f.get(name)?.samples.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
const fileRecords = async (): Promise<Rec[]> =>
  (await readFile(eventsFile, 'utf8').catch(() => ''))
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Rec);

const histogram = (mean: number): metricsPb.MetricsMessage_Histogram => ({ count: 20, max: mean * 2, mean, min: Math.floor(mean / 2), stdDev: 1, variance: 1, p50: mean, p75: mean, p95: mean, p99: mean * 2, p999: mean * 2, p9999: mean * 2 });
const meter = (m1Rate: number): metricsPb.MetricsMessage_Meter => ({ count: 60_000, m1Rate, m5Rate: m1Rate, m15Rate: m1Rate, meanRate: m1Rate });

beforeAll(async () => {
  mgmt = await ctl().adminSession();
  const tag = `metrics-${Date.now()}`;
  ids.a = await enrolledRouter(mgmt, `er-${tag}-a`);
  ids.b = await enrolledRouter(mgmt, `er-${tag}-b`);
  dbl.a = await connectRouter(ctl(), ids.a, { linkListeners: [listener(15001)] });
  dbl.b = await connectRouter(ctl(), ids.b, { linkListeners: [listener(15002)] });
  await dbl.a.reportLinks([{ id: linkId, destRouterId: ids.b.routerId, linkProtocol: 'tls', dialAddress: 'tls:127.0.0.1:15002', iteration: 1 }]);
  expect(await poll(async () => (await linkRow())?.cost === 130_001)).toBe(true);
}, 90_000);
afterAll(async () => {
  for (const d of Object.values(dbl)) await d?.close();
  await rm(eventsFile, { force: true });
});

describe("a router's metrics message", () => {
  it("sets the link's latencies from both ends (mean latency plus queue time, ns) and so its cost", async () => {
    await dbl.a!.sendMetrics({
      histograms: { [`link.${linkId}.latency`]: histogram(2_500_000), [`link.${linkId}.queue_time`]: histogram(500_000) },
      meters: { [`link.${linkId}.tx.bytesrate`]: meter(1500), [`link.${linkId}.rx.bytesrate`]: meter(700), 'ingress.rx.bytesrate': meter(42) },
      intValues: { 'edge.connections': 3 },
      usageCounters: [{ intervalStartUTC: 1_764_583_140, intervalLength: 60, buckets: { circ1: { values: { 'ingress.rx': 4096, 'ingress.tx': 1024 }, tags: { serviceId: 'svc1' } } } }],
    });
    await dbl.b!.sendMetrics({ histograms: { [`link.${linkId}.latency`]: histogram(4_000_000) } });
    const row = await poll(async () => {
      const l = await linkRow();
      return l?.sourceLatency === 3_000_000 && l.destLatency === 4_000_000 ? l : undefined;
    });
    // OpenZiti's cost: the static cost plus both latencies in whole milliseconds.
    expect(row).toMatchObject({ sourceLatency: 3_000_000, destLatency: 4_000_000, cost: 1 + 3 + 4 });
  });

  it('shows on the Prometheus endpoint labelled by router and link id', async () => {
    const a = ids.a.routerId;
    const f = await poll(async () => {
      const m = await scrape();
      return series(m, 'ziti_router_link_latency_seconds', { router_id: ids.b.routerId, link_id: linkId }) ? m : undefined;
    });
    expect(f).toBeDefined();
    expect(series(f!, 'ziti_router_link_latency_seconds', { router_id: a, link_id: linkId })?.value).toBe(0.0025);
    expect(series(f!, 'ziti_router_link_latency_seconds', { router_id: ids.b.routerId, link_id: linkId })?.value).toBe(0.004);
    expect(series(f!, 'ziti_router_link_bytes_per_second', { router_id: a, link_id: linkId, direction: 'tx' })?.value).toBe(1500);
    expect(series(f!, 'ziti_router_link_bytes_per_second', { router_id: a, link_id: linkId, direction: 'rx' })?.value).toBe(700);
    expect(series(f!, 'ziti_router_bytes_per_second', { router_id: a, kind: 'ingress', direction: 'rx' })?.value).toBe(42);
    expect(series(f!, 'ziti_router_edge_connections', { router_id: a })?.value).toBe(3);
    expect(series(f!, 'ziti_router_active_circuits', { router_id: a })?.value).toBe(1);
    expect(series(f!, 'ziti_router_usage_bytes_total', { router_id: a, type: 'ingress.rx' })?.value).toBe(4096);
    expect(f!.get('ziti_router_usage_bytes_total')?.type).toBe('counter');
    expect(sampleSum(f!, 'ziti_router_metrics_messages_total', { outcome: 'accepted' })).toBeGreaterThanOrEqual(2);
  });

  it("becomes OpenZiti's metrics and usage records", async () => {
    const records = await poll(async () => {
      const rs = await fileRecords();
      return rs.some((r) => r.namespace === 'usage') && rs.filter((r) => r.metric === 'link.latency').length === 2 ? rs : undefined;
    });
    expect(records).toBeDefined();
    const latency = records!.find((r) => r.metric === 'link.latency' && r.source_id === ids.a.routerId)!;
    expect(latency).toMatchObject({
      namespace: 'metrics',
      metric_type: 'histogram',
      source_entity_id: linkId,
      version: 3,
      metrics: expect.objectContaining({ mean: 2_500_000, p99: 5_000_000, count: 20 }),
      tags: { sourceRouterId: ids.a.routerId, targetRouterId: ids.b.routerId },
    });
    const batch = records!.filter((r) => r.namespace === 'metrics' && r.source_event_id === latency.source_event_id);
    // queue_time, latency, three meters, one int value: one record each.
    expect(batch).toHaveLength(6);
    expect(records!.find((r) => r.namespace === 'usage')).toMatchObject({
      version: 3,
      source_id: ids.a.routerId,
      circuit_id: 'circ1',
      usage: { 'ingress.rx': 4096, 'ingress.tx': 1024 },
      interval_start_utc: 1_764_583_140,
      interval_length: 60,
      tags: { serviceId: 'svc1' },
    });
  });

  it("drops malformed and oversized reports and keeps the router's channel: a later request still answers", async () => {
    const from = ctl().logs.length;
    await dbl.a!.sendMetrics(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]));
    await dbl.a!.sendMetrics(Buffer.alloc(2 * 1024 * 1024, 0x0a));
    await dbl.a!.sendMetrics({ histograms: { [`link.${linkId}.latency`]: { ...histogram(1), mean: Number.NaN } } });
    expect(await dbl.a!.updateInterfaces([])).toEqual({ success: true, message: '' });
    const f = await poll(async () => {
      const m = await scrape();
      return sampleSum(m, 'ziti_router_metrics_messages_total', { outcome: 'malformed' }) >= 1 && sampleSum(m, 'ziti_router_metrics_messages_total', { outcome: 'oversized' }) >= 1 ? m : undefined;
    });
    expect(f).toBeDefined();
    const lines = ctl().logs.slice(from).filter((l) => l.includes(`router ${ids.a.routerId}:`));
    expect(lines.filter((l) => /malformed metrics message dropped/.test(l))).toHaveLength(1);
    expect(lines.filter((l) => /oversized metrics message dropped/.test(l))).toHaveLength(1);
    expect(dbl.a!.channel.closed).toBe(false);
    // The link kept its cost (a NaN latency is not a measurement).
    expect(await linkRow()).toMatchObject({ sourceLatency: 3_000_000, cost: 8 });
  });

  it("a router that disconnects takes its series and its links' series with it", async () => {
    await dbl.a!.close();
    const f = await poll(async () => {
      const m = await scrape();
      const left = [...m.values()].flatMap((fam) => fam.samples).filter((s) => s.labels.router_id === ids.a.routerId || s.labels.link_id === linkId);
      return left.length === 0 ? m : undefined;
    });
    expect(f).toBeDefined();
  });
});
