import { request } from 'node:http';
import { type RouterMetricsSample, authentications, metricsHost, metricsPort, metricsText, startMetricsServer, trackRouterMetrics } from './index.js';

function get(port: number, path: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    })
      .on('error', reject)
      .end();
  });
}

describe('metricsHost', () => {
  it('keeps metrics on the host unless ZITI_METRICS_HOST opens them', () => {
    expect(metricsHost({})).toBe('127.0.0.1');
    expect(metricsHost({ ZITI_METRICS_HOST: ' ' })).toBe('127.0.0.1');
    expect(metricsHost({ ZITI_METRICS_HOST: '0.0.0.0' })).toBe('0.0.0.0');
  });
});

describe('metricsPort', () => {
  it('reads <CONTEXT>_METRICS_PORT first, then ZITI_METRICS_PORT, then the default', () => {
    expect(metricsPort({}, 'session', 9104)).toBe(9104);
    expect(metricsPort({ ZITI_METRICS_PORT: '9200' }, 'session', 9104)).toBe(9200);
    expect(metricsPort({ ZITI_METRICS_PORT: '9200', SESSION_METRICS_PORT: '9300' }, 'session', 9104)).toBe(9300);
    expect(metricsPort({ IDENTITY_AUTH_METRICS_PORT: '0' }, 'identity-auth', 9101)).toBe(0);
  });

  it('refuses what is not a port, naming the keys', () => {
    expect(() => metricsPort({ ZITI_METRICS_PORT: 'x' })).toThrow(/ZITI_METRICS_PORT/);
    expect(() => metricsPort({ POLICY_METRICS_PORT: '70000' }, 'policy')).toThrow(/POLICY_METRICS_PORT/);
  });
});

describe('startMetricsServer', () => {
  it('port 0 is off: nothing listens', async () => {
    const off = await startMetricsServer('127.0.0.1', 0);
    expect(off.port).toBe(0);
    await off.stop();
  });

  it('serves the registry at /metrics only', async () => {
    const m = await startMetricsServer('127.0.0.1', 0, { listenAnyPort: true });
    try {
      authentications.inc({ context: 'identity-auth', method: 'password', outcome: 'success' });
      const res = await get(m.port, '/metrics');
      expect(res.status).toBe(200);
      expect(res.text).toContain('ziti_authentications_total{context="identity-auth",method="password",outcome="success"} 1');
      expect(res.text).toContain('nodejs_eventloop_lag_seconds');
      expect((await get(m.port, '/')).status).toBe(404);
      expect((await get(m.port, '/metrics/x')).status).toBe(404);
    } finally {
      await m.stop();
    }
  });
});

describe('trackRouterMetrics', () => {
  const sample: RouterMetricsSample = {
    routerId: 'r1',
    links: new Map([['l1', { latencySeconds: 0.0125, txBytesPerSecond: 1500, rxBytesPerSecond: Number.NaN }]]),
    bytesPerSecond: new Map([['ingress.tx', 20]]),
    edgeConnections: 3,
    circuitsWithUsage: 2,
    usageBytes: new Map([['ingress.rx', 4096], ['fabric.tx', 0]]),
  };

  it("renders each router's samples labelled by router and link id while tracked, and nothing after", async () => {
    const untrack = trackRouterMetrics(() => [sample]);
    let text = await metricsText();
    untrack();
    expect(text).toContain('ziti_router_link_latency_seconds{router_id="r1",link_id="l1"} 0.0125');
    expect(text).toContain('ziti_router_link_bytes_per_second{router_id="r1",link_id="l1",direction="tx"} 1500');
    expect(text).not.toContain('direction="rx"');
    expect(text).toContain('ziti_router_bytes_per_second{router_id="r1",kind="ingress",direction="tx"} 20');
    expect(text).toContain('ziti_router_edge_connections{router_id="r1"} 3');
    expect(text).toContain('ziti_router_active_circuits{router_id="r1"} 2');
    expect(text).toContain('ziti_router_usage_bytes_total{router_id="r1",type="ingress.rx"} 4096');
    expect(text).not.toContain('type="fabric.tx"');
    text = await metricsText();
    expect(text).not.toContain('router_id="r1"');
  });
});
