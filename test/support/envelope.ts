import type { HttpResponse } from './http.js';

/**
 * The envelope assertions of the real controller's test suite (`tests/standard.go`, reference
 * §8.1), plus its `requireFieldError`. Each failure message carries the response for diagnosis.
 */

export function showResponse(res: HttpResponse): string {
  return `${res.method} ${res.path} → ${res.status} ${String(res.headers['content-type'] ?? '')}\n${res.text.slice(0, 1500)}`;
}

function fail(res: HttpResponse, what: string): never {
  throw new Error(`${what}\n  response: ${showResponse(res)}`);
}

export function expectStatus(res: HttpResponse, status: number): void {
  if (res.status !== status) fail(res, `expected status ${status}, got ${res.status}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Success: status, content-type application/json, `data` object or array, `meta` object, no `error`. */
export function expectSuccess(res: HttpResponse, status = 200): void {
  expectStatus(res, status);
  if (!/^application\/json\b/i.test(String(res.headers['content-type'] ?? ''))) fail(res, 'success content-type is not application/json');
  if (!isObject(res.body)) fail(res, 'body is not a JSON object');
  const { data, meta } = res.body as Record<string, unknown>;
  if (!(isObject(data) || Array.isArray(data))) fail(res, '`data` is not an object or array');
  if (!isObject(meta)) fail(res, '`meta` is not an object');
  if ('error' in (res.body as object)) fail(res, 'success envelope carries `error`');
}

/** A list envelope: `data` array and `meta.pagination {limit, offset, totalCount}`. */
export function expectList(res: HttpResponse): void {
  expectSuccess(res);
  if (!Array.isArray(res.body.data)) fail(res, '`data` is not an array');
  const p = res.body.meta?.pagination;
  if (!isObject(p) || typeof p.limit !== 'number' || typeof p.offset !== 'number' || typeof p.totalCount !== 'number') {
    fail(res, '`meta.pagination` lacks limit/offset/totalCount');
  }
}

/** The empty envelope of update, patch, delete and logout: `{data: {}, meta: {}}`. */
export function expectEmpty(res: HttpResponse): void {
  expectSuccess(res);
  if (Object.keys(res.body.data).length !== 0) fail(res, '`data` is not empty');
}

/** Create: 201 with `{data: {id, _links.self.href = ./<plural>/<id>}}`; returns the id. */
export function expectCreated(res: HttpResponse, plural: string): string {
  expectSuccess(res, 201);
  const id = res.body.data.id;
  if (typeof id !== 'string' || id === '') fail(res, 'create envelope lacks data.id');
  const href = res.body.data._links?.self?.href;
  if (href !== `./${plural}/${id}`) fail(res, `data._links.self.href is ${JSON.stringify(href)}, expected "./${plural}/${id}"`);
  return id;
}

/**
 * Error: status, `error.code` (= code), `error.message`, `error.requestId`, `meta.apiVersion` and
 * `meta.apiEnrollmentVersion` "0.0.1", no `data`, content-type application/json.
 */
export function expectError(res: HttpResponse, status: number, code: string): void {
  expectStatus(res, status);
  if (!/^application\/json\b/i.test(String(res.headers['content-type'] ?? ''))) fail(res, 'error content-type is not application/json');
  if (!isObject(res.body) || !isObject(res.body.error)) fail(res, 'body has no `error` object');
  const { error, meta } = res.body as { error: Record<string, unknown>; meta: Record<string, unknown> };
  if (error.code !== code) fail(res, `error.code is ${JSON.stringify(error.code)}, expected ${code}`);
  if (typeof error.message !== 'string' || error.message === '') fail(res, 'error.message missing');
  if (typeof error.requestId !== 'string' || error.requestId === '') fail(res, 'error.requestId missing');
  if (!isObject(meta) || meta.apiVersion !== '0.0.1' || meta.apiEnrollmentVersion !== '0.0.1') {
    fail(res, 'meta.apiVersion / meta.apiEnrollmentVersion are not "0.0.1"');
  }
  if ('data' in res.body) fail(res, 'error envelope carries `data`');
}

/** `requireFieldError`: 400 COULD_NOT_VALIDATE with `error.cause.field` (= field when given). */
export function expectFieldError(res: HttpResponse, field?: string): void {
  expectError(res, 400, 'COULD_NOT_VALIDATE');
  const cause = res.body.error.cause;
  if (!isObject(cause) || typeof cause.field !== 'string') fail(res, 'error.cause.field missing');
  if (field !== undefined && cause.field !== field) fail(res, `error.cause.field is ${JSON.stringify(cause.field)}, expected ${field}`);
}
