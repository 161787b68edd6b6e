import { ALL_ROUTES, routeByOperationId } from '@ziti/api-contract';
import { checkResponse, envelopeProblems, expectationFor, frameworkStatuses, leaks, specAvailable } from './fuzz-checks.js';
import type { FuzzResponse } from './fuzz-http.js';
import { CALLERS, type InputContext, inputsFor, permitted } from './fuzz-inputs.js';
import { Raw, fieldsOf, jsonText, jsonTypes, sampleValue, showPath, withExtraField, withValue } from './fuzz-schema.js';
import { pct, seedFor } from './fuzz-values.js';

/** The fuzz suite's own logic, without a controller: encoders, the schema walker, the checks. */

const res = (status: number, json: unknown, contentType = 'application/json'): FuzzResponse => ({ status, headers: { 'content-type': contentType }, text: JSON.stringify(json), json, ms: 0 });
const META = { apiEnrollmentVersion: '0.0.1', apiVersion: '0.0.1' };
const ctx = (): InputContext => {
  let n = 0;
  return { seed: 1, unique: (p) => `${p}-${++n}`, refFor: () => undefined, realId: () => 'real-id' };
};

describe('encoding', () => {
  it('pct encodes all but unreserved bytes, a lone surrogate as its three UTF-8 bytes', () => {
    expect(pct('a b/..\u0000')).toBe('a%20b%2F..%00');
    expect(pct('\ud800')).toBe('%ED%A0%80');
    expect(pct('🦄')).toBe('%F0%9F%A6%84');
  });

  it('jsonText writes Raw values verbatim and escapes NUL and lone surrogates', () => {
    expect(jsonText({ a: new Raw('-0'), b: new Raw('1e999'), c: 'x\u0000\ud800' })).toBe('{"a":-0,"b":1e999,"c":"x\\u0000\\ud800"}');
  });

  it('seeds are stable per key and differ between keys', () => {
    expect(seedFor(1, 'a')).toBe(seedFor(1, 'a'));
    expect(seedFor(1, 'a')).not.toBe(seedFor(1, 'b'));
    expect(seedFor(1, 'a')).not.toBe(seedFor(2, 'a'));
  });
});

describe('schema walker', () => {
  const schema = {
    type: 'object',
    required: ['name', 'primary'],
    properties: {
      name: { type: 'string' },
      count: { type: 'integer', minimum: 3 },
      tags: { anyOf: [{ type: 'object', properties: {}, additionalProperties: true }, { type: 'null' }] },
      primary: { type: 'object', required: ['on'], properties: { on: { type: 'boolean' }, mode: { type: 'string', enum: ['a', 'b'] } } },
      list: { type: 'array', items: { type: 'string' } },
    },
  };

  it('lists every field: nested properties, the first array item, a key of each map', () => {
    expect(fieldsOf(schema).map((f) => showPath(f.path))).toEqual(['name', 'count', 'tags', 'tags.fuzzKey', 'primary', 'primary.on', 'primary.mode', 'list', 'list[0]']);
    expect([...jsonTypes(schema.properties.tags)].sort()).toEqual(['null', 'object']);
    expect([...jsonTypes(schema.properties.count)]).toEqual(['number']);
  });

  it('samples the required fields with valid values', () => {
    expect(sampleValue(schema, ctx())).toEqual({ name: 'name-1', primary: { on: false } });
  });

  it('sets one field, filling missing parents, and adds unknown properties at the top or everywhere', () => {
    const base = sampleValue(schema, ctx());
    expect(withValue(base, schema, ['list', 0], 'x', ctx())).toEqual({ name: 'name-1', primary: { on: false }, list: ['x'] });
    expect(withValue({}, schema, ['primary', 'mode'], 1, ctx())).toEqual({ primary: { on: false, mode: 1 } });
    expect(withExtraField(base, 'z', 1, false)).toEqual({ name: 'name-1', primary: { on: false }, z: 1 });
    expect(withExtraField(base, 'z', 1, true)).toEqual({ name: 'name-1', primary: { on: false, z: 1 }, z: 1 });
  });
});

describe('inputs', () => {
  it('a caller the route admits gets the whole catalogue, a refused one the first input of each kind', () => {
    const create = routeByOperationId('management', 'createIdentity')!;
    const full = inputsFor({ api: 'management', route: create }, 'admin', ctx());
    const reduced = inputsFor({ api: 'management', route: create }, 'none', ctx());
    expect(permitted(create, 'admin') && !permitted(create, 'nonadmin') && !permitted(create, 'none')).toBe(true);
    expect(new Set(reduced.map((i) => i.kind))).toEqual(new Set(full.map((i) => i.kind)));
    expect(reduced.length).toBe(new Set(full.map((i) => i.kind)).size);
    expect(reduced.length).toBeLessThan(full.length / 5);
    for (const kind of ['baseline', 'query', 'header', 'body:malformed', 'body:wrong-type', 'body:nul', 'body:surrogate', 'body:number', 'body:deep', 'body:random']) {
      expect(full.some((i) => i.kind === kind)).toBe(true);
    }
  });

  it('every operation and caller gets sendable requests (path and query inside what node:https accepts)', () => {
    for (const route of ALL_ROUTES) {
      for (const api of route.apis) {
        for (const caller of CALLERS) {
          for (const i of inputsFor({ api, route }, caller, ctx())) expect(/[^\u0021-\u00ff]/.test(i.req.target)).toBe(false);
        }
      }
    }
  });
});

describe('checks', () => {
  const envelope = { error: { code: 'NOT_FOUND', message: 'm', requestId: 'r' }, meta: META };

  it('accepts the exact envelope, with or without an object cause', () => {
    expect(envelopeProblems(res(404, envelope))).toEqual([]);
    expect(envelopeProblems(res(400, { ...envelope, error: { ...envelope.error, cause: { field: 'x' } } }))).toEqual([]);
  });

  it('refuses anything else: content type, extra keys, data, meta, missing fields', () => {
    expect(envelopeProblems(res(404, envelope, 'text/plain'))).not.toEqual([]);
    expect(envelopeProblems(res(404, { ...envelope, data: {} }))).not.toEqual([]);
    expect(envelopeProblems(res(404, { ...envelope, meta: {} }))).not.toEqual([]);
    expect(envelopeProblems(res(404, { ...envelope, error: { code: 'X', message: 'm' } }))).not.toEqual([]);
    expect(envelopeProblems(res(404, { ...envelope, error: { ...envelope.error, stack: 's' } }))).not.toEqual([]);
    expect(envelopeProblems({ status: 400, headers: {}, text: '', json: undefined, ms: 0 })).not.toEqual([]);
  });

  it('finds internal text', () => {
    expect(leaks('at /work/x/services/a/src/b.ts:12:3')).toEqual(expect.arrayContaining(['absolute path', 'source location']));
    expect(leaks('{"message":"Error\\n    at foo (x)"}')).toContain('stack frame');
    expect(leaks('invalid byte sequence for encoding "UTF8": 0x00')).toContain('PostgreSQL encoding error');
    expect(leaks('Invalid `this.db.identity.findUnique()` invocation')).toContain('Prisma');
    expect(leaks('The resource requested was not found or is no longer available')).toEqual([]);
  });

  it('a status must be documented, the success status, a framework one, or a named patch with its code', () => {
    const detail = routeByOperationId('management', 'detailIdentity')!;
    expect(frameworkStatuses(detail)).toEqual([400, 429, 401, 404, 405]);
    const e = expectationFor('management', detail);
    expect(checkResponse(res(404, envelope), e, false)).toEqual([]);
    expect(checkResponse(res(500, envelope), e, false).map((v) => v.rule)).toContain('5xx');
    if (specAvailable()) expect(checkResponse(res(409, { ...envelope, error: { ...envelope.error, code: 'X' } }), e, false).map((v) => v.rule)).toContain('status');
    const mfa = expectationFor('client', routeByOperationId('client', 'authenticateMfa')!);
    expect(checkResponse(res(409, { ...envelope, error: { ...envelope.error, code: 'MFA_NOT_ENROLLED' } }), mfa, false)).toEqual([]);
    if (specAvailable()) expect(checkResponse(res(409, { ...envelope, error: { ...envelope.error, code: 'OTHER' } }), mfa, false).map((v) => v.rule)).toContain('status');
    expect(checkResponse(res(200, { data: {}, meta: {} }), e, true).map((v) => v.rule)).toEqual(['accepted']);
  });
});
