import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats';
import yaml from 'js-yaml';

/**
 * Swagger conformance: response bodies checked against the OpenZiti swagger 2.0 specs
 * (`client.yml`, `management.yml`), read at test time from the reference folder, never copied.
 *
 * The folder is `$ZITI_SPEC_DIR`, else `<repo>/../shared/reference/spec`. When it is absent the
 * validator is a no-op that remembers the fact (`specStatus()`), and the suite says so plainly
 * (see `conformance.test.ts` and the README): conformance is then NOT checked.
 *
 * Swagger 2.0 definitions are mapped to JSON Schema (draft-07) directly: `x-nullable: true` →
 * `anyOf [null, …]`, local `$ref`s → refs into the compiled document, annotations dropped.
 * A few spec defects are patched, each one named in {@link SPEC_PATCHES}.
 */

export type ApiName = 'client' | 'management';

export interface SpecStatus {
  checked: boolean;
  dir: string;
}

export interface Operation {
  api: ApiName;
  method: string;
  template: string;
  operationId?: string;
  /** Declared response statuses (`"200"`, `"401"`, …). */
  statuses: string[];
}

/**
 * Known differences between the swagger specs and the real controller, where the reference
 * (taken from the running controller's code) wins. Each one is applied to the loaded spec.
 */
export const SPEC_PATCHES: readonly string[] = [
  'apiSessionDetail: "cachedUpdatedAt" is required but is no property; the controller never sends it',
  'capabilities: enum gains OIDC_AUTH_WITH_CSR (reference §1.1 and §9.1: the spec copy predates it)',
  'subTags: values may be null, string, boolean or number (the definition says "object", its description and the controller say otherwise)',
  'link.href: format "uri" accepts relative references ("./identities/<id>", reference §7.3)',
  'GET /specs/{id}/spec: 200 is the raw swagger document, not an envelope (reference §7.5; ziti spec_router.go DetailBody)',
  'enrollmentDetail: "details" is required but is no property; the controller never sends it (ziti enrollment_api_model.go)',
  'serviceDetail.config: a config\'s data holds any JSON values (the definition says each value is an object; real configs such as intercept.v1 hold strings, numbers and arrays)',
  'GET /edge-routers/{id}/service-edge-router-policies: 200 lists service edge router policies (ziti edge_router_router.go maps them with MapServiceEdgeRouterPolicyToRestEntity), not service policies',
  'externalJwtSignerDetail / clientExternalJwtSignerDetail: externalAuthUrl, clientId, kid and fingerprint are null when unset (the controller maps them from nil pointers; external_jwt_signer_test.go asserts a nil externalAuthUrl)',
  'dataIntegrityCheckDetails: startTime, endTime and error are null when unset (before a run, while one runs, after one without error; ziti database_router.go GetCheckProgress maps them from nil pointers)',
  'controllerSettingsList: "items" is null (a spec defect no schema compiler accepts); its items are controllerSettingDetail, as every other list\'s are its detail',
];

/** The raw-document operations of SPEC_PATCHES: their 200 body is checked as a swagger document. */
const RAW_SPEC_BODY = '/specs/{id}/spec';

export function specDir(): string {
  return process.env.ZITI_SPEC_DIR ?? path.resolve(__dirname, '../../../shared/reference/spec');
}

interface LoadedApi {
  id: string;
  basePath: string;
  paths: Record<string, Record<string, SwaggerOperation>>;
  matchers: { template: string; re: RegExp; literalSegments: number }[];
}

interface SwaggerOperation {
  operationId?: string;
  responses?: Record<string, { schema?: unknown }>;
}

interface Loaded {
  ajv: Ajv;
  apis: Record<ApiName, LoadedApi>;
  cache: Map<string, ValidateFunction>;
}

let loaded: Loaded | null | undefined;
let loadedFrom = '';

/** Whether conformance is checked, and the folder the specs were (or would have been) read from. */
export function specStatus(): SpecStatus {
  load();
  return { checked: loaded !== null, dir: loadedFrom };
}

function load(): Loaded | null {
  if (loaded !== undefined) return loaded;
  const dir = specDir();
  loadedFrom = dir;
  const files: Record<ApiName, string> = { client: path.join(dir, 'client.yml'), management: path.join(dir, 'management.yml') };
  if (!existsSync(files.client) || !existsSync(files.management)) {
    loaded = null;
    return loaded;
  }
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false, discriminator: false });
  addFormats(ajv);
  ajv.addFormat('uri', fullFormats['uri-reference']);
  const apis = {} as Record<ApiName, LoadedApi>;
  for (const api of ['client', 'management'] as const) {
    const doc = yaml.load(readFileSync(files[api], 'utf8')) as Record<string, any>;
    patchSpec(doc);
    const id = `zt-${api}`;
    for (const f of collectFormats(doc.definitions)) if (!ajv.formats[f]) ajv.addFormat(f, true);
    const definitions = Object.fromEntries(Object.entries(doc.definitions as object).map(([k, v]) => [k, toJsonSchema(v, id)]));
    ajv.addSchema({ $id: id, definitions });
    const paths = doc.paths as LoadedApi['paths'];
    apis[api] = { id, basePath: doc.basePath, paths, matchers: buildMatchers(Object.keys(paths)) };
  }
  loaded = { ajv, apis, cache: new Map() };
  return loaded;
}

function patchSpec(doc: Record<string, any>): void {
  const d = doc.definitions;
  const asd = d.apiSessionDetail?.allOf?.[1];
  if (asd?.required) asd.required = asd.required.filter((r: string) => r !== 'cachedUpdatedAt');
  if (Array.isArray(d.capabilities?.enum) && !d.capabilities.enum.includes('OIDC_AUTH_WITH_CSR')) {
    d.capabilities.enum.push('OIDC_AUTH_WITH_CSR');
  }
  if (d.subTags) d.subTags.additionalProperties = { type: ['string', 'boolean', 'number', 'null'] };
  if (d.controllerSettingsList && !d.controllerSettingsList.items) d.controllerSettingsList.items = { $ref: '#/definitions/controllerSettingDetail' };
  const enrollment = d.enrollmentDetail?.allOf?.[1];
  if (enrollment?.required) enrollment.required = enrollment.required.filter((r: string) => r !== 'details');
  const svcConfig = d.serviceDetail?.allOf?.[1]?.properties?.config;
  if (svcConfig?.additionalProperties) svcConfig.additionalProperties = { type: 'object', additionalProperties: true };
  const erSerps = doc.paths?.['/edge-routers/{id}/service-edge-router-policies']?.get?.responses?.['200'];
  if (erSerps?.schema && d.listServiceEdgeRouterPoliciesEnvelope) erSerps.schema = { $ref: '#/definitions/listServiceEdgeRouterPoliciesEnvelope' };
  const integrity = d.dataIntegrityCheckDetails?.properties;
  for (const n of ['startTime', 'endTime', 'error']) if (integrity?.[n]) integrity[n]['x-nullable'] = true;
  for (const [def, names] of [['externalJwtSignerDetail', ['externalAuthUrl', 'clientId', 'kid', 'fingerprint']], ['clientExternalJwtSignerDetail', ['externalAuthUrl']]] as const) {
    const props = d[def]?.allOf?.[1]?.properties;
    for (const n of names) if (props?.[n]) props[n]['x-nullable'] = true;
  }
}

function collectFormats(node: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((n) => collectFormats(n, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === 'format' && typeof v === 'string') out.add(v);
      else collectFormats(v, out);
    }
  }
  return out;
}

const DROPPED = new Set(['example', 'examples', 'discriminator', 'readOnly', 'xml', 'externalDocs']);

/** Maps one swagger 2.0 schema to draft-07 JSON Schema (refs become refs into the document `docId`). */
export function toJsonSchema(node: unknown, docId: string): any {
  if (Array.isArray(node)) return node.map((n) => toJsonSchema(n, docId));
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  let nullable = false;
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
    if (k === 'x-nullable') nullable = v === true;
    else if (k.startsWith('x-') || DROPPED.has(k)) continue;
    else if (k === '$ref' && typeof v === 'string' && v.startsWith('#/')) out.$ref = `${docId}${v}`;
    else if (k === 'type' && v === 'file') continue;
    else if (k === 'properties' || k === 'definitions' || k === 'patternProperties') {
      out[k] = Object.fromEntries(Object.entries(v as object).map(([p, s]) => [p, toJsonSchema(s, docId)]));
    } else if (k === 'enum' || k === 'required' || k === 'default') out[k] = v;
    else out[k] = toJsonSchema(v, docId);
  }
  return nullable ? { anyOf: [{ type: 'null' }, out] } : out;
}

function buildMatchers(templates: string[]): LoadedApi['matchers'] {
  return templates
    .map((template) => {
      const segs = template.split('/');
      const re = new RegExp(
        '^' + segs.map((s) => (/^\{.+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))).join('/') + '/?$',
      );
      return { template, re, literalSegments: segs.filter((s) => s && !s.startsWith('{')).length };
    })
    .sort((a, b) => b.literalSegments - a.literalSegments);
}

/**
 * Which API and spec path a request URL path addresses, following the controller's routing
 * (reference §1.1): the two bases, `/edge/v1` as the client API, un-prefixed paths as the client API.
 * Doubled slashes are collapsed. Returns undefined for paths outside the Edge APIs.
 */
export function resolveApiPath(urlPath: string): { api: ApiName; path: string } | undefined {
  const p = (urlPath.split('?')[0] ?? '/').replace(/\/{2,}/g, '/');
  const strip = (base: string) => p.slice(base.length) || '/';
  if (p === '/edge/management/v1' || p.startsWith('/edge/management/v1/')) return { api: 'management', path: strip('/edge/management/v1') };
  if (p === '/edge/client/v1' || p.startsWith('/edge/client/v1/')) return { api: 'client', path: strip('/edge/client/v1') };
  if (p === '/edge/v1' || p.startsWith('/edge/v1/')) return { api: 'client', path: strip('/edge/v1') };
  if (p.startsWith('/edge') || p.startsWith('/fabric') || p.startsWith('/oidc')) return undefined;
  return { api: 'client', path: p };
}

/** The spec operation for a method and a concrete API-relative path, if the spec declares it. */
export function findOperation(api: ApiName, method: string, apiPath: string): Operation | undefined {
  const l = load();
  if (!l) return undefined;
  const a = l.apis[api];
  const m = a.matchers.find((x) => x.re.test(apiPath) && a.paths[x.template]?.[method.toLowerCase()]);
  if (!m) return undefined;
  const op = a.paths[m.template][method.toLowerCase()];
  return { api, method: method.toUpperCase(), template: m.template, operationId: op.operationId, statuses: Object.keys(op.responses ?? {}) };
}

function validatorFor(l: Loaded, api: ApiName, key: string, schema: unknown): ValidateFunction {
  const cacheKey = `${api} ${key}`;
  let fn = l.cache.get(cacheKey);
  if (!fn) {
    fn = l.ajv.compile(toJsonSchema(schema, l.apis[api].id));
    l.cache.set(cacheKey, fn);
  }
  return fn;
}

/** How many responses were checked against a schema, and which were not (no spec operation). */
export const validationStats = { checked: 0, unchecked: [] as string[] };

/**
 * Validates a response body against what the spec declares for (api, method, template, status).
 * Returns the list of problems; empty when valid, or when the spec folder is absent (see
 * `specStatus()`). Error statuses the operation does not declare are checked against
 * `apiErrorEnvelope`, as the controller renders every error in that envelope. When the spec has
 * no such operation (unknown path or verb), only error statuses are checked.
 */
export function checkResponse(api: ApiName, method: string, template: string, status: number, body: unknown): string[] {
  const l = load();
  if (!l) return [];
  const op = l.apis[api].paths[template]?.[method.toLowerCase()];
  const where = `${api} ${method.toUpperCase()} ${template} → ${status}`;
  if (op && status === 200 && template === RAW_SPEC_BODY) {
    validationStats.checked += 1;
    const doc = body as Record<string, unknown> | undefined;
    return doc && doc.swagger === '2.0' && typeof doc.paths === 'object' ? [] : [`${where}: body is not a swagger 2.0 document`];
  }
  const declared = op?.responses?.[String(status)];
  let schema: unknown;
  let key: string;
  if (declared?.schema) {
    schema = declared.schema;
    key = `${method} ${template} ${status}`;
  } else if (status >= 400) {
    schema = { $ref: '#/definitions/apiErrorEnvelope' };
    key = 'apiErrorEnvelope';
  } else if (op) {
    return declared ? [] : [`${where}: status ${status} is not declared by the spec (declared: ${Object.keys(op.responses ?? {}).join(', ')})`];
  } else {
    validationStats.unchecked.push(`${api} ${method.toUpperCase()} ${template} → ${status}`);
    return [];
  }
  validationStats.checked += 1;
  const fn = validatorFor(l, api, key, schema);
  if (fn(body)) return [];
  return (fn.errors ?? []).slice(0, 10).map((e) => `${where}: ${e.instancePath || '(body)'} ${e.message}${e.params ? ' ' + JSON.stringify(e.params) : ''}`);
}

/** Throws (failing the test) unless `body` is valid for the operation and status. No-op without specs. */
export function expectValid(api: ApiName, method: string, template: string, status: number, body: unknown): void {
  const problems = checkResponse(api, method, template, status, body);
  if (problems.length) throw new Error(`swagger conformance failed:\n  ${problems.join('\n  ')}\n body: ${JSON.stringify(body).slice(0, 2000)}`);
}

/**
 * Validates a response the suite received, from its URL path: resolves API and template, then
 * `checkResponse`. Returns problems (empty when valid, unknown or not checked).
 */
export function checkReceived(method: string, urlPath: string, status: number, body: unknown): string[] {
  if (!load()) return [];
  const r = resolveApiPath(urlPath);
  if (!r) return status >= 400 ? checkResponse('client', method, '(none)', status, body) : [];
  const op = findOperation(r.api, method, r.path);
  return checkResponse(r.api, method, op?.template ?? '(none)', status, body);
}
