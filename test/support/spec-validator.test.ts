import path from 'node:path';

/**
 * The validator's own tests: against a tiny hand-written swagger document (always), against the
 * real OpenZiti specs with bodies shaped like the spec examples (when the spec folder exists), and
 * its no-op mode when the folder is missing. No controller is started here.
 */

type Validator = typeof import('./spec-validator.js');

function loadWith(dir: string | undefined): Validator {
  const saved = process.env.ZITI_SPEC_DIR;
  let mod: Validator | undefined;
  jest.isolateModules(() => {
    if (dir === undefined) delete process.env.ZITI_SPEC_DIR;
    else process.env.ZITI_SPEC_DIR = dir;
    mod = require('./spec-validator.js') as Validator;
    mod.specStatus(); // loads while the variable is set
  });
  if (saved === undefined) delete process.env.ZITI_SPEC_DIR;
  else process.env.ZITI_SPEC_DIR = saved;
  return mod!;
}

const NOW = '2026-01-02T03:04:05.678Z';
const META_ERR = { apiVersion: '0.0.1', apiEnrollmentVersion: '0.0.1' };
const thing = (over: Record<string, unknown> = {}) => ({
  id: 'abc', createdAt: NOW, updatedAt: NOW, tags: {}, _links: { self: { href: './things/abc' } }, name: 'x', externalId: null, ...over,
});

describe('spec validator: swagger 2.0 mapping (hand-written fixture)', () => {
  const v = loadWith(path.join(__dirname, 'fixtures/mini-spec'));

  it('loads the fixture (with !!float) and reports conformance as checked', () => {
    expect(v.specStatus().checked).toBe(true);
  });

  it('accepts a valid detail envelope, with x-nullable null and a relative link', () => {
    expect(v.checkResponse('client', 'GET', '/things/{id}', 200, { data: thing(), meta: {} })).toEqual([]);
  });

  it('rejects missing required fields, wrong types and null where not nullable', () => {
    const { name: _n, ...noName } = thing();
    expect(v.checkResponse('client', 'GET', '/things/{id}', 200, { data: noName, meta: {} }).join()).toMatch(/name/);
    expect(v.checkResponse('client', 'GET', '/things/{id}', 200, { data: thing({ cost: 'high' }), meta: {} }).join()).toMatch(/cost/);
    expect(v.checkResponse('client', 'GET', '/things/{id}', 200, { data: thing({ name: null }), meta: {} }).join()).toMatch(/name/);
    expect(v.checkResponse('client', 'GET', '/things/{id}', 200, { data: thing({ cost: 70000 }), meta: {} }).join()).toMatch(/cost/);
    expect(v.checkResponse('client', 'GET', '/things/{id}', 200, { data: thing({ createdAt: 'yesterday' }), meta: {} }).join()).toMatch(/createdAt/);
  });

  it('keeps a property named like a keyword a property', () => {
    expect(v.checkResponse('client', 'GET', '/things/{id}', 200, { data: thing({ example: 5 }), meta: {} }).join()).toMatch(/example/);
  });

  it('checks lists, meta.pagination and inline (non-$ref) response schemas', () => {
    expect(v.checkResponse('client', 'GET', '/things', 200, { data: [thing()], meta: { pagination: { limit: 10, offset: 0, totalCount: 1 } } })).toEqual([]);
    expect(v.checkResponse('client', 'GET', '/things', 200, { data: [thing()], meta: { pagination: { limit: 10 } } })).not.toEqual([]);
    expect(v.checkResponse('client', 'GET', '/things/{id}/sub', 200, { data: 'text' })).toEqual([]);
    expect(v.checkResponse('client', 'GET', '/things/{id}/sub', 200, { data: 5 })).not.toEqual([]);
  });

  it('checks error statuses against the declared schema, or apiErrorEnvelope when undeclared', () => {
    const err = { error: { code: 'UNAUTHORIZED', message: 'm', requestId: 'r' }, meta: META_ERR };
    expect(v.checkResponse('client', 'GET', '/things', 401, err)).toEqual([]);
    expect(v.checkResponse('client', 'GET', '/things', 413, err)).toEqual([]);
    expect(v.checkResponse('client', 'GET', '/things', 413, { data: {} }).join()).toMatch(/error/);
    expect(v.checkResponse('client', 'GET', '(none)', 404, { meta: {} }).join()).toMatch(/error/);
  });

  it('flags a success status the operation does not declare', () => {
    expect(v.checkResponse('client', 'POST', '/things', 200, { data: {}, meta: {} }).join()).toMatch(/not declared/);
    expect(v.checkResponse('client', 'POST', '/things', 201, { data: { id: 'a', _links: { self: { href: './things/a' } } }, meta: {} })).toEqual([]);
  });

  it('applies the named spec patches', () => {
    expect(v.SPEC_PATCHES.length).toBeGreaterThan(0);
    expect(v.checkResponse('client', 'GET', '/version', 200, { data: { capabilities: ['OIDC_AUTH_WITH_CSR'] }, meta: {} })).toEqual([]);
    expect(v.checkResponse('client', 'GET', '/version', 200, { data: { capabilities: ['NOPE'] }, meta: {} })).not.toEqual([]);
    expect(v.checkResponse('client', 'GET', '/things/{id}', 200, { data: thing({ tags: { a: 'b', c: true, d: null } }), meta: {} })).toEqual([]);
    const session = { ...thing(), token: 't' };
    expect(v.checkResponse('client', 'GET', '/current-api-session', 200, { data: session, meta: {} })).toEqual([]);
    expect(v.checkResponse('client', 'GET', '/specs/{id}/spec', 200, { swagger: '2.0', paths: {} })).toEqual([]);
    expect(v.checkResponse('client', 'GET', '/specs/{id}/spec', 200, { data: 'x', meta: {} })).not.toEqual([]);
  });

  it('resolves URL paths to API and template the way the controller routes them', () => {
    expect(v.resolveApiPath('/edge/management/v1/things/x?limit=1')).toEqual({ api: 'management', path: '/things/x' });
    expect(v.resolveApiPath('/edge/client/v1')).toEqual({ api: 'client', path: '/' });
    expect(v.resolveApiPath('/edge/v1/version')).toEqual({ api: 'client', path: '/version' });
    expect(v.resolveApiPath('/authenticate?method=password')).toEqual({ api: 'client', path: '/authenticate' });
    expect(v.resolveApiPath('/edge/client/v1//things')).toEqual({ api: 'client', path: '/things' });
    expect(v.resolveApiPath('/fabric/v1/routers')).toBeUndefined();
    expect(v.findOperation('management', 'GET', '/things/x')?.template).toBe('/things/{id}');
    expect(v.findOperation('management', 'GET', '/things/x/sub')?.template).toBe('/things/{id}/sub');
    expect(v.findOperation('management', 'DELETE', '/things/x')).toBeUndefined();
    expect(v.checkReceived('GET', '/edge/client/v1/things/x', 200, { data: thing(), meta: {} })).toEqual([]);
    expect(v.checkReceived('POST', '/edge/client/v1/version', 405, { data: {} }).join()).toMatch(/error/);
  });
});

describe('spec validator: no-op when the spec folder is missing', () => {
  const v = loadWith(path.join(__dirname, 'fixtures/does-not-exist'));

  it('reports conformance as NOT checked and validates nothing', () => {
    expect(v.specStatus()).toEqual({ checked: false, dir: path.join(__dirname, 'fixtures/does-not-exist') });
    expect(v.checkResponse('client', 'GET', '/things', 200, 'anything')).toEqual([]);
    expect(v.checkReceived('GET', '/edge/client/v1/version', 200, null)).toEqual([]);
  });
});

describe('spec validator: the OpenZiti specs with bodies shaped like their examples', () => {
  const v = loadWith(process.env.ZITI_SPEC_DIR);
  const present = v.specStatus().checked;

  it('validates spec-shaped bodies when the spec folder is present (otherwise says so)', () => {
    if (!present) {
      console.warn(`swagger conformance NOT checked: ${v.specStatus().dir} missing`);
      return;
    }
    const identity = {
      id: 'a1b2c3', createdAt: NOW, updatedAt: NOW, tags: {}, name: 'n', type: { id: 'Default', name: 'Default', entity: 'identity-types', _links: {} },
      typeId: 'Default', isDefaultAdmin: false, isAdmin: false, authenticators: {}, enrollment: {}, envInfo: {}, sdkInfo: {},
      roleAttributes: null, hasEdgeRouterConnection: false, edgeRouterConnectionStatus: 'unknown', hasApiSession: false, isMfaEnabled: false,
      serviceHostingPrecedences: {}, serviceHostingCosts: {}, defaultHostingCost: 0, authPolicyId: 'default',
      authPolicy: { id: 'default', name: 'Default', entity: 'auth-policies', _links: { self: { href: './auth-policies/default' } } },
      externalId: null, disabled: false, permissions: [], _links: { self: { href: './identities/a1b2c3' } },
    };
    expect(v.checkResponse('management', 'GET', '/identities/{id}', 200, { data: identity, meta: {} })).toEqual([]);
    expect(v.checkResponse('management', 'GET', '/identities', 200, { data: [identity], meta: { pagination: { limit: 10, offset: 0, totalCount: 1 }, filterableFields: ['name'] } })).toEqual([]);
    const { typeId: _t, ...noTypeId } = identity;
    expect(v.checkResponse('management', 'GET', '/identities/{id}', 200, { data: noTypeId, meta: {} }).join()).toMatch(/typeId/);
    const error = { error: { code: 'COULD_NOT_VALIDATE', message: 'The supplied request contains an invalid document', requestId: 'Xy3.kLm9-', cause: { field: 'name', reason: 'name is required', value: '' } }, meta: META_ERR };
    expect(v.checkResponse('management', 'POST', '/identities', 400, error)).toEqual([]);
    expect(v.checkResponse('client', 'GET', '/version', 200, { data: { version: 'v1', capabilities: ['HA_CONTROLLER'], apiVersions: { edge: { v1: { path: '/edge/client/v1', apiBaseUrls: ['https://h:1/edge/client/v1'] } } } }, meta: {} })).toEqual([]);
    expect(v.checkResponse('client', 'GET', '/version', 200, { data: { apiVersions: { edge: { v1: { apiBaseUrls: [] } } } }, meta: {} }).join()).toMatch(/path/);
  });
});
