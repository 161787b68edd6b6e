import { request } from 'node:http';
import { auth, type EdgeApi } from '../support/clients.js';
import { networkBuilder, sessionClients } from '../support/clients-session.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectError, expectList } from '../support/envelope.js';
import { type MetricFamily, parsePrometheusText, sampleSum } from '../support/prom-text.js';

/**
 * Prometheus metrics (issue 19): the all-in-one controller serves every context's metrics on a
 * port of its own, in the text format, labelled by context; the families are there and move with
 * logins, service lists, session creates, failed logins and limiter refusals; the API listener
 * does not serve them.
 */

const ctl = useController({
  metricsPort: 0,
  // A low per-username failure limit, so a refusal is cheap to provoke.
  guards: { loginFailureLimits: { perUsername: 2, perAddress: 1000, windowSeconds: 60 } },
});
failOnConformanceProblems();

function fetchText(port: number, path: string): Promise<{ status: number; contentType: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function scrape(): Promise<Map<string, MetricFamily>> {
  const port = ctl().running.metricsPort;
  if (!port) throw new Error('the controller serves no metrics port');
  const res = await fetchText(port, '/metrics');
  expect(res.status).toBe(200);
  expect(res.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(res.text);
}

const FAMILIES: Record<string, MetricFamily['type']> = {
  ziti_http_request_duration_seconds: 'histogram',
  ziti_authentications_total: 'counter',
  ziti_mfa_verifications_total: 'counter',
  ziti_enrollments_total: 'counter',
  ziti_session_creates_total: 'counter',
  ziti_grpc_server_handling_seconds: 'histogram',
  ziti_grpc_client_handling_seconds: 'histogram',
  ziti_outbox_backlog: 'gauge',
  ziti_outbox_published_total: 'counter',
  ziti_outbox_publish_lag_seconds: 'histogram',
  ziti_events_consumed_total: 'counter',
  ziti_event_consume_lag_seconds: 'histogram',
  ziti_nats_consumer_pending: 'gauge',
  ziti_db_pool_connections: 'gauge',
  ziti_db_query_duration_seconds: 'histogram',
  ziti_cache_requests_total: 'counter',
  ziti_rate_limit_refusals_total: 'counter',
  ziti_router_link_latency_seconds: 'gauge',
  ziti_router_link_bytes_per_second: 'gauge',
  ziti_router_bytes_per_second: 'gauge',
  ziti_router_edge_connections: 'gauge',
  ziti_router_active_circuits: 'gauge',
  ziti_router_usage_bytes_total: 'counter',
  ziti_router_metrics_messages_total: 'counter',
  nodejs_eventloop_lag_seconds: 'gauge',
  nodejs_heap_size_used_bytes: 'gauge',
  nodejs_gc_duration_seconds: 'histogram',
  process_cpu_seconds_total: 'counter',
};

let mgmt: EdgeApi;
let user: { client: EdgeApi; username: string; password: string };
let serviceId: string;

beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  const net = networkBuilder(mgmt);
  const tag = net.unique('m');
  const identity = await net.identity([`${tag}-users`]);
  const login = await auth.login(ctl().http, identity.username, identity.password, 'client');
  if (!login.token) throw new Error(`login failed: ${login.res.text}`);
  user = { client: login.session, username: identity.username, password: identity.password };
  await net.edgeRouter([`${tag}-routers`]);
  await net.edgeRouterPolicy([`#${tag}-users`], [`#${tag}-routers`]);
  serviceId = await net.service([`${tag}-svc`]);
  await net.serviceEdgeRouterPolicy([`#${tag}-svc`], [`#${tag}-routers`]);
  await net.servicePolicy('Dial', [`#${tag}-users`], [`#${tag}-svc`]);
});

describe('the metrics listener', () => {
  it('serves the text format with every documented family, parsed strictly', async () => {
    const families = await scrape();
    for (const [name, type] of Object.entries(FAMILIES)) {
      expect({ name, type: families.get(name)?.type }).toEqual({ name, type });
    }
  });

  it('labels every context: requests, pools and gRPC calls carry context="<name>"', async () => {
    const families = await scrape();
    const contexts = (name: string) => new Set(families.get(name)!.samples.map((s) => s.labels.context));
    const pools = contexts('ziti_db_pool_connections');
    for (const c of ['identity-auth', 'pki-enrollment', 'policy', 'session', 'posture', 'fabric']) expect(pools).toContain(c);
    const requests = contexts('ziti_http_request_duration_seconds');
    for (const c of ['gateway', 'identity-auth', 'policy']) expect(requests).toContain(c);
    expect(contexts('ziti_grpc_server_handling_seconds')).toContain('policy');
    // No label carries an entity id: operation labels are contract operation ids.
    for (const s of families.get('ziti_http_request_duration_seconds')!.samples) expect(s.labels.operation).toMatch(/^[a-zA-Z]+$/);
  });

  it('is 404 for any other path, and the API listener has no /metrics', async () => {
    const other = await fetchText(ctl().running.metricsPort!, '/edge/client/v1/version');
    expect(other.status).toBe(404);
    for (const path of ['/metrics', '/edge/client/v1/metrics', '/edge/management/v1/metrics']) {
      expectError(await ctl().http.get(path), 404, 'NOT_FOUND');
    }
  });
});

describe('counters move with requests', () => {
  it('a login, a failed login, a service list and a session create', async () => {
    const before = await scrape();
    const okLogin = await auth.login(ctl().http, user.username, user.password, 'client');
    expect(okLogin.res.status).toBe(200);
    const bad = await auth.login(ctl().http, user.username, 'wrong-password-1A!', 'client');
    expect(bad.res.status).toBe(401);
    expectList(await user.client.call('GET', '/services'));
    const created = await sessionClients(user.client).createSession(serviceId, 'Dial');
    expect(created.status).toBe(201);
    const after = await scrape();

    const delta = (name: string, match: Record<string, string>) => sampleSum(after, name, match) - sampleSum(before, name, match);
    expect(delta('ziti_authentications_total', { context: 'identity-auth', method: 'password', outcome: 'success' })).toBe(1);
    expect(delta('ziti_authentications_total', { context: 'identity-auth', method: 'password', outcome: 'failure' })).toBe(1);
    expect(delta('ziti_http_request_duration_seconds_count', { context: 'gateway', operation: 'authenticate', status: '401' })).toBe(1);
    expect(delta('ziti_http_request_duration_seconds_count', { context: 'gateway', operation: 'listServices', status: '200' })).toBe(1);
    expect(delta('ziti_http_request_duration_seconds_count', { context: 'policy', operation: 'listServices', status: '200' })).toBe(1);
    expect(delta('ziti_http_request_duration_seconds_count', { context: 'session', operation: 'createSession', status: '201' })).toBe(1);
    expect(delta('ziti_session_creates_total', { context: 'session', type: 'Dial', outcome: 'success' })).toBe(1);
    // The create asked policy for the access on both ends of the gRPC call.
    expect(delta('ziti_grpc_client_handling_seconds_count', { context: 'session', method: '/ziti.v1.PolicyService/GetServiceAccess', code: '0' })).toBeGreaterThanOrEqual(1);
    expect(delta('ziti_grpc_server_handling_seconds_count', { context: 'policy', method: '/ziti.v1.PolicyService/GetServiceAccess', code: '0' })).toBeGreaterThanOrEqual(1);
    // The list and the create resolved the new session's principal through the cache, and the databases were queried.
    expect(delta('ziti_cache_requests_total', { context: 'gateway', cache: 'principal' })).toBeGreaterThanOrEqual(2);
    expect(delta('ziti_db_query_duration_seconds_count', { context: 'identity-auth' })).toBeGreaterThanOrEqual(1);
    // Latency is observed: the sum grew.
    expect(delta('ziti_http_request_duration_seconds_sum', { context: 'gateway', operation: 'listServices' })).toBeGreaterThan(0);
  });

  it('a refused session create is counted by its error code', async () => {
    const before = await scrape();
    const res = await sessionClients(user.client).createSession(serviceId, 'Bind');
    expect(res.status).toBe(400);
    const code = (res.body as { error: { code: string } }).error.code;
    const after = await scrape();
    const match = { context: 'session', type: 'Bind', outcome: code };
    expect(sampleSum(after, 'ziti_session_creates_total', match) - sampleSum(before, 'ziti_session_creates_total', match)).toBe(1);
  });

  it('limiter refusals are counted by limiter', async () => {
    const before = await scrape();
    const username = `nobody-${Date.now()}`;
    let refused = 0;
    for (let i = 0; i < 6 && refused === 0; i++) {
      const r = await auth.login(ctl().http, username, 'wrong-password-1A!', 'management');
      if (r.res.status === 429) refused++;
      else expect(r.res.status).toBe(401);
    }
    expect(refused).toBe(1);
    const after = await scrape();
    const match = { context: 'gateway', limiter: 'login-failures' };
    expect(sampleSum(after, 'ziti_rate_limit_refusals_total', match) - sampleSum(before, 'ziti_rate_limit_refusals_total', match)).toBe(1);
  });
});

describe('outbox and events', () => {
  it('an identity create is published from the outbox and consumed, with its lag observed', async () => {
    const before = await scrape();
    const net = networkBuilder(mgmt);
    await net.identity([]);
    // Publication and consumption are asynchronous: poll the scrape.
    const deadline = Date.now() + 15_000;
    let after = await scrape();
    const moved = (a: Map<string, MetricFamily>) =>
      sampleSum(a, 'ziti_outbox_publish_lag_seconds_count', { context: 'identity-auth' }) > sampleSum(before, 'ziti_outbox_publish_lag_seconds_count', { context: 'identity-auth' }) &&
      sampleSum(a, 'ziti_events_consumed_total', { outcome: 'ok' }) > sampleSum(before, 'ziti_events_consumed_total', { outcome: 'ok' });
    while (!moved(after) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      after = await scrape();
    }
    expect(moved(after)).toBe(true);
    expect(sampleSum(after, 'ziti_outbox_published_total', { context: 'identity-auth' })).toBeGreaterThan(sampleSum(before, 'ziti_outbox_published_total', { context: 'identity-auth' }));
  });
});
