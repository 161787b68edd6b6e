import yaml from 'js-yaml';
import { BASE } from '../support/clients.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectError, expectStatus, expectSuccess } from '../support/envelope.js';
import type { ApiName } from '../support/spec-validator.js';

/** Informational endpoints served by the gateway (reference §1.1, §7.5). */

const ctl = useController();
failOnConformanceProblems();

const SPEC_ID: Record<ApiName, string> = { client: 'edge-client', management: 'edge-management' };

describe.each(['client', 'management'] as const)('%s API', (api) => {
  const base = BASE[api];

  it('GET /enumerated-capabilities → OIDC_AUTH, HA_CONTROLLER, OIDC_AUTH_WITH_CSR', async () => {
    const res = await ctl().http.get(`${base}/enumerated-capabilities`);
    expectSuccess(res);
    expect([...res.body.data].sort()).toEqual(['HA_CONTROLLER', 'OIDC_AUTH', 'OIDC_AUTH_WITH_CSR']);
  });

  it(`GET /specs lists ${SPEC_ID[api]}`, async () => {
    const res = await ctl().http.get(`${base}/specs`);
    expectSuccess(res);
    const ids = res.body.data.map((s: { id: string }) => s.id);
    expect(ids).toContain(SPEC_ID[api]);
    const spec = res.body.data.find((s: { id: string }) => s.id === SPEC_ID[api]);
    expect(spec.name).toBe(SPEC_ID[api]);
    expect(spec._links.self.href).toBe(`./specs/${SPEC_ID[api]}`);
  });

  it('GET /specs/{id} → the spec entity', async () => {
    const res = await ctl().http.get(`${base}/specs/${SPEC_ID[api]}`);
    expectSuccess(res);
    expect(res.body.data).toMatchObject({ id: SPEC_ID[api], name: SPEC_ID[api] });
  });

  it('GET /specs/{unknown} → 404 NOT_FOUND', async () => {
    expectError(await ctl().http.get(`${base}/specs/no-such-spec`), 404, 'NOT_FOUND');
  });

  it('GET /specs/{id}/spec → the swagger document as JSON', async () => {
    const res = await ctl().http.get(`${base}/specs/${SPEC_ID[api]}/spec`);
    expectStatus(res, 200);
    expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
    expect(res.body.swagger).toBe('2.0');
    expect(res.body.basePath).toBe(base);
    expect(typeof res.body.paths['/version']).toBe('object');
  });

  it('GET /specs/{id}/spec with Accept: text/yaml → the same document as text/yaml', async () => {
    const res = await ctl().http.request({ path: `${base}/specs/${SPEC_ID[api]}/spec`, headers: { accept: 'text/yaml' } });
    expectStatus(res, 200);
    expect(String(res.headers['content-type'])).toMatch(/^text\/yaml/);
    const doc = yaml.load(res.text) as Record<string, unknown>;
    expect(doc.swagger).toBe('2.0');
    expect(doc.basePath).toBe(base);
  });
});

describe('GET /protocols (client API)', () => {
  it('→ the https address', async () => {
    const res = await ctl().http.get(`${BASE.client}/protocols`);
    expectSuccess(res);
    expect(typeof res.body.data.https?.address).toBe('string');
    expect(res.body.data.https.address).toMatch(/:\d+$/);
  });
});

describe('identity types (authenticated, management API)', () => {
  it('without a session → 401 UNAUTHORIZED', async () => {
    expectError(await ctl().http.get(`${BASE.management}/identity-types`), 401, 'UNAUTHORIZED');
  });

  it('lists the built-ins Default and Router', async () => {
    const mgmt = await ctl().adminSession();
    const res = await mgmt.identityTypes.list();
    expectSuccess(res);
    const byId = Object.fromEntries(res.body.data.map((t: { id: string; name: string }) => [t.id, t.name]));
    expect(byId).toMatchObject({ Default: 'Default', Router: 'Router' });
    expect(res.body.meta.pagination.totalCount).toBe(res.body.data.length);
  });

  it('GET /identity-types/Default → detail; unknown → 404', async () => {
    const mgmt = await ctl().adminSession();
    const res = await mgmt.identityTypes.get('Default');
    expectSuccess(res);
    expect(res.body.data).toMatchObject({ id: 'Default', name: 'Default' });
    expect(res.body.data._links.self.href).toBe('./identity-types/Default');
    expectError(await mgmt.identityTypes.get('NoSuchType'), 404, 'NOT_FOUND');
  });
});
