import type { EdgeApiName, RouteDef } from '@ziti/api-contract';
import { API_BASES } from '@ziti/http-kit';
import { DefinitionSet, type Json } from './schema.js';

/** The spec ids of the two Edge APIs, as `/specs` lists them (the fabric API has no document here). */
export const SPEC_IDS: Record<EdgeApiName, string> = { client: 'edge-client', management: 'edge-management' };

const TITLES: Record<EdgeApiName, { title: string; description: string }> = {
  client: { title: 'Ziti Edge Client', description: 'OpenZiti Edge Client API' },
  management: { title: 'Ziti Edge Management', description: 'OpenZiti Edge Management API' },
};

const STATUS_TEXT: Record<number, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content' };

const WWW_AUTHENTICATE = {
  'WWW-Authenticate': {
    description: 'Denotes different type of security token related information',
    type: 'array',
    items: { type: 'string' },
  },
};

export interface SpecOptions {
  api: EdgeApiName;
  routes: readonly RouteDef[];
  models: Readonly<Record<string, unknown>>;
  /** `host:port` clients reach the controller at. */
  host: string;
  version: string;
}

function queryParameter(name: string, schema: Json, required: boolean, defs: DefinitionSet): Json {
  const p: Json = { name, in: 'query', required };
  if (typeof schema.description === 'string') p.description = schema.description;
  if (schema.type === 'array') {
    const items = (schema.items ?? {}) as Json;
    const itemSchema = defs.convert({ ...items, $id: undefined });
    p.type = 'array';
    p.items = { type: typeof itemSchema.type === 'string' ? itemSchema.type : 'string', ...(itemSchema.enum ? { enum: itemSchema.enum } : {}) };
    p.collectionFormat = typeof schema.collectionFormat === 'string' ? schema.collectionFormat : 'multi';
    return p;
  }
  const converted = defs.convert({ ...schema, $id: undefined });
  p.type = typeof converted.type === 'string' && converted.type !== 'object' ? converted.type : 'string';
  for (const k of ['format', 'enum', 'default', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern']) {
    if (converted[k] !== undefined) p[k] = converted[k];
  }
  return p;
}

function parameters(route: RouteDef, defs: DefinitionSet): Json[] {
  const out: Json[] = [];
  for (const m of route.path.matchAll(/\{([A-Za-z0-9_]+)\}/g)) {
    out.push({ name: m[1], in: 'path', required: true, type: 'string', description: 'The id of the requested resource' });
  }
  const query = route.query as unknown as Json | undefined;
  if (query && typeof query.properties === 'object' && query.properties) {
    const required = new Set(Array.isArray(query.required) ? (query.required as string[]) : []);
    for (const [name, schema] of Object.entries(query.properties as Record<string, Json>)) {
      out.push(queryParameter(name, schema, required.has(name), defs));
    }
  }
  if (route.body) {
    const id = (route.body as { $id?: unknown }).$id;
    out.push({ name: typeof id === 'string' ? id : 'body', in: 'body', required: !route.bodyOptional, schema: defs.convert(route.body) });
  }
  return out;
}

function errorResponse(description: string, defs: DefinitionSet, challenge = false): Json {
  return { description, schema: defs.convert({ $ref: 'apiErrorEnvelope' }), ...(challenge ? { headers: WWW_AUTHENTICATE } : {}) };
}

function operation(route: RouteDef, defs: DefinitionSet): Json {
  const params = parameters(route, defs);
  const success: Json = { description: STATUS_TEXT[route.success.status] ?? 'Success' };
  if (route.success.schema) success.schema = defs.convert(route.success.schema);
  const responses: Json = { [String(route.success.status)]: success };
  if (params.some((p) => p.in !== 'path')) responses['400'] = errorResponse('The supplied request contains invalid fields or could not be parsed', defs);
  if (route.access !== 'anonymous') {
    responses['401'] = errorResponse('The supplied session does not have the correct access rights to request this resource', defs, true);
  }
  if (params.some((p) => p.in === 'path')) responses['404'] = errorResponse('The requested resource does not exist', defs);
  if (route.body) responses['413'] = errorResponse('The request body is larger than 1 MiB', defs);
  if (route.owner !== 'gateway') {
    responses['503'] = errorResponse('The request could not be completed due to the server being busy or in a temporarily bad state', defs);
  }

  const op: Json = { operationId: route.operationId, summary: route.summary, tags: [...route.tags] };
  if (params.length > 0) op.parameters = params;
  if (route.operationId === 'detailSpecBody') op.produces = ['application/json', 'text/yaml'];
  else if (route.success.contentType && route.success.contentType !== 'application/json') op.produces = [route.success.contentType];
  op.responses = responses;
  if (route.access === 'anonymous') op.security = [];
  return op;
}

const METHOD_ORDER = ['get', 'post', 'put', 'patch', 'delete'];

/**
 * The swagger 2.0 document of one API, generated from the contract: every route of the API with
 * its operationId, tags, path/query/body parameters, success and error responses and security,
 * and every model of the contract under `definitions`.
 */
export function generateSpec(opts: SpecOptions): Json {
  const defs = new DefinitionSet(opts.models);
  const paths: Record<string, Record<string, Json>> = {};
  const tags = new Set<string>();
  for (const route of opts.routes.filter((r) => r.apis.includes(opts.api))) {
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route, defs);
    route.tags.forEach((t) => tags.add(t));
  }
  defs.convert({ $ref: 'apiErrorEnvelope' });
  for (const [id, schema] of Object.entries(opts.models)) defs.define(id, schema);

  const sortedPaths = Object.fromEntries(
    Object.keys(paths)
      .sort()
      .map((p) => [p, Object.fromEntries(Object.entries(paths[p]!).sort(([a], [b]) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b)))]),
  );
  const definitions = Object.fromEntries(Object.keys(defs.definitions).sort().map((k) => [k, defs.definitions[k]!]));

  return {
    swagger: '2.0',
    info: { ...TITLES[opts.api], version: opts.version, license: { name: 'Apache 2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0.html' } },
    host: opts.host,
    basePath: API_BASES[opts.api],
    schemes: ['https'],
    consumes: ['application/json'],
    produces: ['application/json'],
    securityDefinitions: {
      ztSession: { type: 'apiKey', in: 'header', name: 'zt-session', description: 'An API Key that is provided post authentication' },
    },
    security: [{ ztSession: [] }],
    tags: [...tags].sort().map((name) => ({ name })),
    paths: sortedPaths,
    definitions,
  };
}
