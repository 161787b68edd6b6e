import { BASE } from '../support/clients.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectError, expectSuccess } from '../support/envelope.js';
import type { HttpResponse } from '../support/http.js';

/** Headers on every Edge API response, and CORS (reference §1.1). */

const ctl = useController();
failOnConformanceProblems();

const ORIGIN = 'https://console.example.test';

function lowerList(v: string | string[] | undefined): string[] {
  return String(v ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
}

describe('ziti-instance-id and server', () => {
  let responses: HttpResponse[];
  beforeAll(async () => {
    const mgmt = await ctl().adminSession();
    responses = [
      await ctl().http.get(`${BASE.client}/version`),
      await ctl().http.get(`${BASE.management}/i-do-not-exist`),
      await ctl().http.get(`${BASE.management}/identities`),
      await mgmt.identities.list(),
      await mgmt.currentIdentity.get(),
    ];
  });

  it('every response (success, 404, 401, proxied) carries the same non-empty ziti-instance-id', () => {
    const ids = responses.map((r) => r.headers['ziti-instance-id']);
    for (const id of ids) expect(typeof id === 'string' && id.length > 0).toBe(true);
    expect(new Set(ids).size).toBe(1);
  });

  it('every response carries server: ziti-controller/<version>', () => {
    for (const r of responses) expect(r.headers.server).toMatch(/^ziti-controller\/\S+/);
  });
});

describe('CORS', () => {
  it('a request with Origin gets that origin back, with credentials allowed', async () => {
    const res = await ctl().http.request({ path: `${BASE.client}/version`, headers: { origin: ORIGIN } });
    expectSuccess(res);
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
  });

  it('error responses carry the CORS headers too', async () => {
    const res = await ctl().http.request({ path: `${BASE.management}/identities`, headers: { origin: ORIGIN } });
    expectError(res, 401, 'UNAUTHORIZED');
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
  });

  it('a preflight OPTIONS is answered without a session, allowing the verbs and headers clients use', async () => {
    const res = await ctl().http.request({
      method: 'OPTIONS',
      path: `${BASE.management}/identities`,
      headers: { origin: ORIGIN, 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'zt-session, content-type' },
    });
    expect([200, 204]).toContain(res.status);
    expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    const methods = lowerList(res.headers['access-control-allow-methods']);
    for (const m of ['get', 'head', 'post', 'put', 'patch', 'delete']) expect(methods).toContain(m);
    const headers = lowerList(res.headers['access-control-allow-headers']);
    for (const h of ['content-type', 'accept', 'authorization', 'zt-session']) expect(headers).toContain(h);
  });
});
