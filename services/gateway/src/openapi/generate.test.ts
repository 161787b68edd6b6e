import { ALL_ROUTES, EDGE_APIS, MODELS, route } from '@ziti/api-contract';
import { generateSpec } from './generate.js';
import { DefinitionSet, type Json } from './schema.js';

function refs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refs(n, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

describe.each([...EDGE_APIS])('generated %s spec', (api) => {
  const doc = generateSpec({ api, routes: ALL_ROUTES, models: MODELS, host: 'ctrl.example:1280', version: 'v9.9.9' }) as Json & {
    paths: Record<string, Record<string, Json>>;
    definitions: Record<string, Json>;
  };

  it('is a swagger 2.0 document for the API base, round-tripping through JSON', () => {
    expect(doc).toMatchObject({
      swagger: '2.0',
      host: 'ctrl.example:1280',
      basePath: api === 'client' ? '/edge/client/v1' : '/edge/management/v1',
      schemes: ['https'],
      securityDefinitions: { ztSession: { type: 'apiKey', in: 'header', name: 'zt-session' } },
    });
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
  });

  it('has every route of the API, once, with its operationId, tags and security', () => {
    const routes = ALL_ROUTES.filter((r) => r.apis.includes(api));
    const ops = Object.values(doc.paths).flatMap((p) => Object.values(p));
    expect(ops).toHaveLength(routes.length);
    for (const r of routes) {
      const op = doc.paths[r.path]?.[r.method.toLowerCase()];
      expect(op).toMatchObject({ operationId: r.operationId, tags: [...r.tags] });
      expect(op!.responses).toHaveProperty(String(r.success.status));
      if (r.access === 'anonymous') expect(op!.security).toEqual([]);
      else {
        expect(op!.security).toBeUndefined();
        expect(op!.responses).toHaveProperty('401');
      }
      const pathParams = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const declared = ((op!.parameters ?? []) as Json[]).filter((p) => p.in === 'path').map((p) => p.name);
      expect(declared).toEqual(pathParams);
      if (r.body) expect(((op!.parameters ?? []) as Json[]).some((p) => p.in === 'body' && p.required === !r.bodyOptional)).toBe(true);
    }
    const ids = ops.map((o) => o.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('defines every model of the contract and resolves every reference', () => {
    for (const id of Object.keys(MODELS)) expect(doc.definitions).toHaveProperty(id);
    for (const ref of refs(doc)) {
      expect(ref).toMatch(/^#\/definitions\//);
      expect(doc.definitions).toHaveProperty(ref.slice('#/definitions/'.length));
    }
  });

  it('uses only swagger 2.0 schema keywords', () => {
    const text = JSON.stringify(doc);
    for (const banned of ['"anyOf"', '"oneOf"', '"const"', '"$id"', '"patternProperties"', '"unevaluatedProperties"']) {
      expect(text).not.toContain(banned);
    }
  });
});

describe('query and body parameters', () => {
  const routes = [
    route({
      operationId: 'listWidgets', method: 'GET', path: '/widgets', apis: ['client'], owner: 'policy', access: 'authenticated',
      tags: ['Widget'], summary: 'List widgets',
      query: { type: 'object', required: ['mode'], properties: {
        limit: { type: 'integer' }, mode: { type: 'string', enum: ['a', 'b'] },
        roleFilter: { type: 'array', items: { type: 'string' }, collectionFormat: 'multi' },
      } } as never,
      success: { status: 200 },
    }),
    route({
      operationId: 'createWidget', method: 'POST', path: '/widgets', apis: ['client'], owner: 'policy', access: 'management',
      tags: ['Widget'], summary: 'Create', body: { $id: 'widgetCreate', type: 'object', properties: { name: { type: 'string' } } } as never,
      success: { status: 201 },
    }),
  ];
  const doc = generateSpec({ api: 'client', routes, models: MODELS, host: 'h:1', version: 'v1' }) as { paths: Record<string, Record<string, Json>>; definitions: Record<string, Json> };

  it('turns the query schema into typed query parameters', () => {
    expect(doc.paths['/widgets']!.get!.parameters).toEqual([
      { name: 'limit', in: 'query', required: false, type: 'integer' },
      { name: 'mode', in: 'query', required: true, type: 'string', enum: ['a', 'b'] },
      { name: 'roleFilter', in: 'query', required: false, type: 'array', items: { type: 'string' }, collectionFormat: 'multi' },
    ]);
  });

  it('references a named body model and adds the error responses', () => {
    const post = doc.paths['/widgets']!.post!;
    expect(post.parameters).toEqual([{ name: 'widgetCreate', in: 'body', required: true, schema: { $ref: '#/definitions/widgetCreate' } }]);
    expect(doc.definitions.widgetCreate).toEqual({ type: 'object', properties: { name: { type: 'string' } } });
    expect(Object.keys(post.responses as Json).sort()).toEqual(['201', '400', '401', '413', '503']);
  });
});

describe('DefinitionSet', () => {
  it('converts nullable, literal unions, records, constants and exclusive bounds', () => {
    const defs = new DefinitionSet();
    expect(defs.convert({ anyOf: [{ type: 'string' }, { type: 'null' }], description: 'd' })).toEqual({ type: 'string', description: 'd', 'x-nullable': true });
    expect(defs.convert({ anyOf: [{ const: 'Dial', type: 'string' }, { const: 'Bind', type: 'string' }] })).toEqual({ type: 'string', enum: ['Dial', 'Bind'] });
    expect(defs.convert({ type: 'object', patternProperties: { '^(.*)$': { type: 'integer' } } })).toEqual({ type: 'object', additionalProperties: { type: 'integer' } });
    expect(defs.convert({ type: 'number', exclusiveMinimum: 0 })).toEqual({ type: 'number', minimum: 0, exclusiveMinimum: true });
    expect(defs.convert({ anyOf: [{ $id: 'named', type: 'object' }, { type: 'null' }] })).toEqual({ allOf: [{ $ref: '#/definitions/named' }], 'x-nullable': true });
    expect(defs.definitions.named).toEqual({ type: 'object' });
  });

  it('resolves bare references and survives recursive models', () => {
    const node: Json = { $id: 'node', type: 'object', properties: {} };
    (node.properties as Json).children = { type: 'array', items: node };
    const defs = new DefinitionSet({ other: { type: 'string' } });
    expect(defs.convert(node)).toEqual({ $ref: '#/definitions/node' });
    expect(defs.definitions.node).toEqual({ type: 'object', properties: { children: { type: 'array', items: { $ref: '#/definitions/node' } } } });
    expect(defs.convert({ $ref: 'other' })).toEqual({ $ref: '#/definitions/other' });
    expect(defs.definitions.other).toEqual({ type: 'string' });
  });
});
