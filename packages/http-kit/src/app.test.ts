import request from 'supertest';
import { Type } from '@sinclair/typebox';
import type { RouteDef } from '@ziti/api-contract';
import { createServer } from 'node:http';
import { configureLogging, logger } from '@ziti/log';
import { ApiError } from '@ziti/errors';
import { createServiceApp } from './app.js';
import { attachPrincipal } from './http.js';
import { PRINCIPAL_HEADER, REQUEST_ID_HEADER, type RequestPrincipal, signPrincipal } from './principal.js';

const SECRET = 'test-secret';

const principal = (over: Partial<RequestPrincipal> = {}): RequestPrincipal => ({
  identityId: 'id1',
  identityName: 'someone',
  apiSessionId: 'as1',
  isAdmin: false,
  isDefaultAdmin: false,
  isFullyAuthenticated: true,
  permissions: [],
  configTypes: [],
  authenticatorId: 'au1',
  expiresAt: new Date().toISOString(),
  expirationSeconds: 1800,
  identityTypeId: 'Default',
  ...over,
});

const routes: RouteDef[] = [
  {
    operationId: 'createThing',
    method: 'POST',
    path: '/things',
    apis: ['management'],
    owner: 'policy',
    access: 'management',
    permission: 'thing',
    tags: ['Thing'],
    summary: 'create',
    body: Type.Object({ name: Type.String(), cost: Type.Optional(Type.Integer()) }, { additionalProperties: false }),
    success: { status: 201 },
  },
  {
    operationId: 'listThings',
    method: 'GET',
    path: '/things',
    apis: ['management'],
    owner: 'policy',
    access: 'management',
    permission: 'thing',
    tags: ['Thing'],
    summary: 'list',
    success: { status: 200 },
  },
  {
    operationId: 'login',
    method: 'POST',
    path: '/login',
    apis: ['client'],
    owner: 'policy',
    access: 'anonymous',
    tags: [],
    summary: 'a body that may be absent',
    body: Type.Object({ hint: Type.Optional(Type.String()) }, { additionalProperties: false }),
    bodyOptional: true,
    success: { status: 200 },
  },
  {
    operationId: 'getThing',
    method: 'GET',
    path: '/things/{id}',
    apis: ['management'],
    owner: 'policy',
    access: 'management',
    permission: 'thing',
    tags: ['Thing'],
    summary: 'detail',
    success: { status: 200 },
  },
  {
    operationId: 'mine',
    method: 'GET',
    path: '/mine',
    apis: ['client'],
    owner: 'policy',
    access: 'authenticated',
    tags: [],
    summary: 'mine',
    success: { status: 200 },
  },
];

/** Requests that reached a handler (text checks must refuse before any handler runs). */
const reached: string[] = [];

const app = createServiceApp({
  owner: 'policy',
  internalSecret: SECRET,
  routes,
  handlers: {
    createThing: (ctx) => {
      reached.push('createThing');
      if ((ctx.body as { name?: string }).name === 'explode') throw new Error('duplicate key value violates unique constraint "things_name_key" at /srv/app/dist/store.js:12');
      if ((ctx.body as { name?: string }).name === 'log') logger('policy').info('creating a thing');
      return { body: { data: { got: ctx.body }, meta: {} } };
    },
    getThing: (ctx) => {
      reached.push('getThing');
      return { body: { data: { id: ctx.params.id }, meta: {} } };
    },
    listThings: () => (reached.push('listThings'), { body: { data: [], meta: { pagination: { limit: 9223372036854775807, offset: 0, totalCount: 0 } } } }),
    mine: (ctx) => ({ body: { data: { id: ctx.principal?.identityId }, meta: {} } }),
    login: (ctx) => ({ body: { data: { absent: ctx.body === undefined, got: ctx.body ?? null }, meta: {} } }),
  },
});

const as = (p: RequestPrincipal) => ({ [PRINCIPAL_HEADER]: signPrincipal(SECRET, p, 'rid1') });

describe('createServiceApp', () => {
  it('refuses a request without a principal with 401 UNAUTHORIZED in the envelope', async () => {
    const res = await request(app).get('/edge/management/v1/things');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
    expect(typeof res.body.error.requestId).toBe('string');
    expect(res.body.meta).toEqual({ apiEnrollmentVersion: '0.0.1', apiVersion: '0.0.1' });
  });

  it('refuses a principal signed with another secret', async () => {
    const res = await request(app)
      .get('/edge/management/v1/things')
      .set(PRINCIPAL_HEADER, signPrincipal('other', principal({ isAdmin: true }), 'r'));
    expect(res.status).toBe(401);
  });

  it('lets an admin through and a non-admin without permission not', async () => {
    expect((await request(app).get('/edge/management/v1/things').set(as(principal({ isAdmin: true })))).status).toBe(200);
    expect((await request(app).get('/edge/management/v1/things').set(as(principal()))).status).toBe(401);
  });

  it('applies admin_readonly to reads only, and entity permissions by action', async () => {
    const ro = principal({ permissions: ['admin_readonly'] });
    expect((await request(app).get('/edge/management/v1/things').set(as(ro))).status).toBe(200);
    expect((await request(app).post('/edge/management/v1/things').set(as(ro)).send({ name: 'x' })).status).toBe(401);
    const creator = principal({ permissions: ['thing.create'] });
    expect((await request(app).post('/edge/management/v1/things').set(as(creator)).send({ name: 'x' })).status).toBe(201);
    expect((await request(app).get('/edge/management/v1/things').set(as(creator))).status).toBe(401);
  });

  it('refuses a partially authenticated session on authenticated routes', async () => {
    const res = await request(app).get('/edge/client/v1/mine').set(as(principal({ isFullyAuthenticated: false })));
    expect(res.status).toBe(401);
    const ok = await request(app).get('/edge/client/v1/mine').set(as(principal()));
    expect(ok.body.data.id).toBe('id1');
  });

  it('renders body validation failures as COULD_NOT_VALIDATE with the field', async () => {
    const admin = as(principal({ isAdmin: true }));
    const missing = await request(app).post('/edge/management/v1/things').set(admin).send({});
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('COULD_NOT_VALIDATE');
    expect(missing.body.error.cause.field).toBe('name');
    const wrongType = await request(app).post('/edge/management/v1/things').set(admin).send({ name: 5 });
    expect(wrongType.body.error.cause.field).toBe('name');
  });

  it('accepts and drops body fields the model does not name, and still checks the ones it does', async () => {
    const admin = as(principal({ isAdmin: true }));
    const unknown = await request(app).post('/edge/management/v1/things').set(admin).send({ name: 'a', color: 'red', cost: 3 });
    expect(unknown.status).toBe(201);
    expect(unknown.body.data.got).toEqual({ name: 'a', cost: 3 });
    const wrong = await request(app).post('/edge/management/v1/things').set(admin).send({ name: 'a', color: 'red', cost: 'x' });
    expect([wrong.status, wrong.body.error.cause.field]).toEqual([400, 'cost']);
  });

  describe('text PostgreSQL cannot store', () => {
    const admin = as(principal({ isAdmin: true }));
    beforeEach(() => {
      reached.length = 0;
    });

    it.each([
      ['a NUL', { name: 'a\u0000b' }, 'name'],
      ['a lone high surrogate', { name: 'a\ud800' }, 'name'],
      ['a lone low surrogate', { name: '\udc00' }, 'name'],
      ['a NUL in an unknown field', { name: 'ok', extra: { deep: ['x\u0000'] } }, 'extra.deep.0'],
      ['a NUL in a key', { name: 'ok', tags: { 'k\u0000': 1 } }, 'tags.k\u0000'],
    ])('refuses %s in the body with 400 COULD_NOT_VALIDATE naming the field, before the handler', async (_what, body, field) => {
      const res = await request(app).post('/edge/management/v1/things').set(admin).set('content-type', 'application/json').send(JSON.stringify(body));
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('COULD_NOT_VALIDATE');
      expect(res.body.error.cause.field).toBe(field);
      expect(reached).toEqual([]);
    });

    it('keeps well-formed text, surrogate pairs included', async () => {
      const res = await request(app).post('/edge/management/v1/things').set(admin).send({ name: 'é漢😀' });
      expect(res.status).toBe(201);
      expect(res.body.data.got.name).toBe('é漢😀');
    });

    it('refuses a NUL or an encoded lone surrogate in the query with 400, and in a path id with 404', async () => {
      const query = await request(app).get('/edge/management/v1/things?filter=name%3D%22a%00%22').set(admin);
      expect([query.status, query.body.error.code, query.body.error.cause.field]).toEqual([400, 'COULD_NOT_VALIDATE', 'filter']);
      const nested = await request(app).get('/edge/management/v1/things?a[b]=%00').set(admin);
      expect([nested.status, nested.body.error.cause.field]).toEqual([400, 'a.b']);
      const id = await request(app).get('/edge/management/v1/things/%00').set(admin);
      expect([id.status, id.body.error.code]).toEqual([404, 'NOT_FOUND']);
      const surrogate = await request(app).get('/edge/management/v1/things/a%ED%A0%80').set(admin);
      expect(surrogate.status).toBe(200); // not valid percent-encoded UTF-8: the id stays as sent, which is storable
      expect(reached).toEqual(['getThing']);
    });
  });

  it('refuses JSON nested deeper than the limit with 400 COULD_NOT_PARSE_BODY, and takes it up to the limit', async () => {
    const admin = as(principal({ isAdmin: true }));
    const deep = (n: number) => `{"name":"x","extra":${'['.repeat(n - 1)}${']'.repeat(n - 1)}}`;
    const over = await request(app).post('/edge/management/v1/things').set(admin).set('content-type', 'application/json').send(deep(5000));
    expect([over.status, over.body.error.code]).toEqual([400, 'COULD_NOT_PARSE_BODY']);
    const limit = await request(app).post('/edge/management/v1/things').set(admin).set('content-type', 'application/json').send(deep(100));
    expect(limit.status).toBe(201);
    const strings = await request(app).post('/edge/management/v1/things').set(admin).set('content-type', 'application/json').send(JSON.stringify({ name: '['.repeat(500) }));
    expect(strings.status).toBe(201);
  });

  it('answers an unexpected failure with 500 UNHANDLED and the request id only, and logs the detail', async () => {
    const lines: string[] = [];
    configureLogging({ level: 'info', format: 'json', destination: { write: (l: string) => lines.push(l) } });
    try {
      const res = await request(app).post('/edge/management/v1/things').set(as(principal({ isAdmin: true }))).send({ name: 'explode' });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({
        error: { code: 'UNHANDLED', message: 'An unhandled error occurred', requestId: res.body.error.requestId },
        meta: { apiEnrollmentVersion: '0.0.1', apiVersion: '0.0.1' },
      });
      expect(res.text).not.toContain('violates');
      const records = lines.map((l) => JSON.parse(l) as Record<string, any>);
      expect(records).toHaveLength(1);
      expect(records[0]).toMatchObject({ level: 'error', context: 'policy', requestId: res.body.error.requestId, status: 500, code: 'UNHANDLED', msg: '500 UNHANDLED' });
      expect(records[0]!.err).toMatchObject({ type: 'Error', message: expect.stringContaining('violates unique constraint') });
      expect(records[0]!.err.stack).toContain('app.test');
    } finally {
      configureLogging({ destination: { write: () => undefined } });
    }
  });

  it('serves a request in its log context (request id, operation, caller) and logs it at debug level', async () => {
    const lines: string[] = [];
    configureLogging({ level: 'debug', format: 'json', destination: { write: (l: string) => lines.push(l) } });
    try {
      const caller = principal({ isAdmin: true });
      const res = await request(app).post('/edge/management/v1/things?secret=query-value').set(as(caller)).set('x-ziti-request-id', 'fromGateway1').send({ name: 'log' });
      expect(res.status).toBe(201);
      const records = lines.map((l) => JSON.parse(l) as Record<string, any>);
      const ids = { requestId: 'fromGateway1', operationId: 'createThing', identityId: caller.identityId };
      expect(records.find((r) => r.msg === 'creating a thing')).toMatchObject({ level: 'info', context: 'policy', ...ids });
      const access = records.filter((r) => r.msg === 'request finished');
      expect(access).toHaveLength(1);
      expect(access[0]).toMatchObject({ level: 'debug', ...ids, method: 'POST', path: '/edge/management/v1/things', status: 201, api: 'management' });
      expect(typeof access[0]!.latencyMs).toBe('number');
      expect(lines.join('')).not.toContain('query-value');
    } finally {
      configureLogging({ destination: { write: () => undefined } });
    }
  });

  it('lets a bodyOptional route through without a body, and still validates a body that is sent', async () => {
    const none = await request(app).post('/edge/client/v1/login');
    expect(none.status).toBe(200);
    expect(none.body.data).toEqual({ absent: true, got: null });
    const empty = await request(app).post('/edge/client/v1/login').set('content-type', 'application/json').set('content-length', '0');
    expect(empty.status).toBe(200);
    const sent = await request(app).post('/edge/client/v1/login').send({ hint: 'x' });
    expect(sent.body.data).toEqual({ absent: false, got: { hint: 'x' } });
    const bad = await request(app).post('/edge/client/v1/login').send({ hint: 5 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.cause.field).toBe('hint');
    const required = await request(app).post('/edge/management/v1/things').set(as(principal({ isAdmin: true })));
    expect(required.status).toBe(400);
    expect(required.body.error.cause.field).toBe('(root)');
  });

  it('answers malformed JSON with 400 COULD_NOT_PARSE_BODY and large bodies with 413', async () => {
    const admin = as(principal({ isAdmin: true }));
    const bad = await request(app).post('/edge/management/v1/things').set(admin).set('content-type', 'application/json').send('{"name":');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('COULD_NOT_PARSE_BODY');
    const big = await request(app)
      .post('/edge/management/v1/things')
      .set(admin)
      .set('content-type', 'application/json')
      .send(JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) }));
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('REQUEST_ENTITY_TOO_LARGE');
  });

  it('answers 404 for unknown paths and 405 for known paths with another verb', async () => {
    const nf = await request(app).get('/edge/management/v1/nope');
    expect(nf.status).toBe(404);
    expect(nf.body.error.code).toBe('NOT_FOUND');
    const na = await request(app).delete('/edge/management/v1/things');
    expect(na.status).toBe(405);
    expect(na.body.error.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('writes the unlimited page size exactly as 2^63-1', async () => {
    const res = await request(app).get('/edge/management/v1/things').set(as(principal({ isAdmin: true })));
    expect(res.text).toContain('"limit":9223372036854775807');
  });

  it('serves health and readiness', async () => {
    expect((await request(app).get('/healthz')).status).toBe(200);
    expect((await request(app).get('/readyz')).body.ready).toBe(true);
  });

  it('takes the principal a request was handed over with in-process, without a signed header', async () => {
    const handed = createServer((req, res) => {
      if (req.headers['x-test-hand-over'] === 'yes') attachPrincipal(req, principal({ identityId: 'handed' }));
      app(req, res);
    });
    const ok = await request(handed).get('/edge/client/v1/mine').set('x-test-hand-over', 'yes');
    expect([ok.status, ok.body.data.id]).toEqual([200, 'handed']);
    const none = await request(handed).get('/edge/client/v1/mine');
    expect(none.status).toBe(401);
  });

  it('hands paths equal to or under the raw prefix to the raw handler, in the request context, and renders what it throws', async () => {
    const seen: { path: string; requestId: string; principal: unknown }[] = [];
    const rawApp = createServiceApp({
      owner: 'policy',
      internalSecret: SECRET,
      routes,
      handlers: { createThing: () => ({}), getThing: () => ({}), listThings: () => ({}), mine: () => ({}), login: () => ({}) },
      raw: {
        prefix: '/oidc',
        async handle(req, res, requestId) {
          seen.push({ path: req.url ?? '', requestId, principal: req.zitiPrincipal });
          if (req.url === '/oidc/fail') throw ApiError.of('INVALID_AUTH');
          res.statusCode = 200;
          res.end('raw');
        },
      },
    });
    expect((await request(rawApp).get('/oidc').set(REQUEST_ID_HEADER, 'rq1')).text).toBe('raw');
    expect((await request(rawApp).post('/oidc/keys?x=1').set(as(principal()))).text).toBe('raw');
    expect(seen).toEqual([
      { path: '/oidc', requestId: 'rq1', principal: undefined },
      { path: '/oidc/keys?x=1', requestId: expect.any(String), principal: undefined },
    ]);
    const failed = await request(rawApp).get('/oidc/fail').set(REQUEST_ID_HEADER, 'rq2');
    expect(failed.status).toBe(401);
    expect(failed.body.error).toMatchObject({ code: 'INVALID_AUTH', requestId: 'rq2' });
    expect((await request(rawApp).get('/oidcx')).status).toBe(404);
    expect(seen).toHaveLength(3);
  });
});
