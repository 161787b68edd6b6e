import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ApiName, RouteDef } from '@ziti/api-contract';
import yaml from 'js-yaml';
import type { FuzzResponse } from './fuzz-http.js';
import { specDir } from './spec-validator.js';

/**
 * The assertions the fuzz suite makes of every response: no 5xx, a documented status, the exact
 * OpenZiti error envelope on every error, and nothing internal in an error body.
 */

/**
 * Statuses any operation may answer although its swagger entry does not list them, because the
 * shared request pipeline (gateway and `createServiceApp`) produces them before or around the
 * handler. Each entry says when it applies; everything else must be documented by the spec.
 *
 * - 400: the request is malformed as HTTP/JSON/ZitiQL: an undecodable body, a query value the
 *   pipeline cannot read. go-swagger answers these for every operation too, documented or not.
 * - 401: the route is not anonymous and the caller has no (valid) session or lacks the right.
 * - 404: the route has path parameters: the id does not exist, or the bad id (`%2F`, `..`) makes
 *   the path match no route at all.
 * - 405: the route has path parameters: `..` or `%2F` in an id can make the path another route's.
 * - 415: the route takes a body: the suite sends bodies as `text/plain` and as UTF-16.
 * - 429: rate limiting applies to any operation under load (the spec lists it for most).
 * Deliberately absent: 413 (no input is near the 1 MiB limit), 5xx (never acceptable), 403, 409,
 * 410 (only where the spec says so).
 */
export function frameworkStatuses(route: RouteDef): number[] {
  const s = [400, 429];
  if (route.access !== 'anonymous') s.push(401);
  if (/\{/.test(route.path)) s.push(404, 405);
  if (route.body) s.push(415);
  return s;
}

interface SpecOp {
  responses: string[];
  /** How the operation was found in the spec. */
  via: 'operationId' | 'method and path' | 'absent';
}

/** The Edge APIs' swagger documents (the fabric API has none in the reference: its operations are `absent`). */
let specs: Partial<Record<ApiName, Record<string, unknown>>> | null | undefined;

function loadSpecs(): Partial<Record<ApiName, Record<string, unknown>>> | null {
  if (specs !== undefined) return specs;
  const dir = specDir();
  const files = { client: path.join(dir, 'client.yml'), management: path.join(dir, 'management.yml') };
  specs = existsSync(files.client) && existsSync(files.management)
    ? { client: yaml.load(readFileSync(files.client, 'utf8')) as Record<string, unknown>, management: yaml.load(readFileSync(files.management, 'utf8')) as Record<string, unknown> }
    : null;
  return specs;
}

export function specAvailable(): boolean {
  return loadSpecs() !== null;
}

/** The responses the swagger spec documents for a route: by operationId, else by method and path. */
export function specOperation(api: ApiName, route: RouteDef): SpecOp {
  const doc = loadSpecs()?.[api] as { paths: Record<string, Record<string, { operationId?: string; responses?: Record<string, unknown> }>> } | undefined;
  if (!doc) return { responses: [], via: 'absent' };
  let byPath: SpecOp | undefined;
  for (const [p, ops] of Object.entries(doc.paths)) {
    for (const [m, op] of Object.entries(ops)) {
      if (!op || typeof op !== 'object' || !op.responses) continue;
      if (op.operationId === route.operationId) return { responses: Object.keys(op.responses), via: 'operationId' };
      if (p === route.path && m.toUpperCase() === route.method) byPath = { responses: Object.keys(op.responses), via: 'method and path' };
    }
  }
  return byPath ?? { responses: [], via: 'absent' };
}

/**
 * Statuses the real controller answers that its swagger entry omits, each with the one error code
 * it may carry, as the reference (`openziti-edge-api.md` §3.2, and the section named) documents
 * them. Where the reference and the spec disagree the reference wins (see the README); nothing
 * else widens the documented set.
 */
export const STATUS_PATCHES: readonly { operationId: string; status: number; code: string; reference: string }[] = [
  { operationId: 'authenticateMfa', status: 409, code: 'MFA_NOT_ENROLLED', reference: '§2.4 "Not enrolled → 409 MFA_NOT_ENROLLED"' },
  { operationId: 'enrollMfa', status: 409, code: 'MFA_EXISTS', reference: '§3.2 "POST /current-identity/mfa when a record exists"' },
  { operationId: 'createEnrollment', status: 409, code: 'ENROLLMENT_EXISTS', reference: '§3.2 and §6.5 "a second enrollment of the same method"' },
  { operationId: 'extendCurrentIdentityAuthenticator', status: 409, code: 'CAN_NOT_UPDATE_AUTHENTICATOR', reference: '§3.2 (extend of an authenticator that is not an extendable certificate)' },
  { operationId: 'extendVerifyCurrentIdentityAuthenticator', status: 409, code: 'CAN_NOT_UPDATE_AUTHENTICATOR', reference: '§3.2 (nothing pending to verify)' },
];

/** What a route may answer: documented statuses, the pipeline's, the success status, the patches. */
export interface Expectation {
  allowed: Set<number>;
  success: number;
  patches: { status: number; code: string }[];
  via: SpecOp['via'];
}

/**
 * The statuses a route may answer: what the spec documents (for an operation the spec lacks, the
 * contract's success status and 400/401/404, the shape every other operation documents), plus
 * {@link frameworkStatuses} and the route's {@link STATUS_PATCHES}.
 */
export function expectationFor(api: ApiName, route: RouteDef): Expectation {
  const op = specOperation(api, route);
  const documented = op.via === 'absent' ? [route.success.status, 400, 401, 404] : op.responses.map(Number).filter(Number.isInteger);
  const patches = STATUS_PATCHES.filter((p) => p.operationId === route.operationId);
  return { allowed: new Set([...documented, ...frameworkStatuses(route)]), success: route.success.status, patches, via: op.via };
}

/** Internal text an error body must never carry (paths, stack frames, driver and runtime messages). */
export const LEAK_PATTERNS: readonly { label: string; re: RegExp }[] = [
  { label: 'absolute path', re: /\/(work|home|usr|opt|tmp|root|var)\/[\w.-]/ },
  { label: 'node_modules', re: /node_modules/ },
  { label: 'source location', re: /\.(ts|js|mjs|cjs):\d*/ },
  { label: 'stack frame', re: /(^|\\n|\n)\s{4}at / },
  { label: 'PostgreSQL encoding error', re: /invalid byte sequence/i },
  { label: 'PostgreSQL syntax error', re: /syntax error at or near/i },
  { label: 'constraint violation', re: /violates/i },
  { label: 'relation name', re: /relation "/i },
  { label: 'Prisma', re: /prisma|Invalid `[^`]*` invocation|DriverAdapterError/i },
  { label: 'PostgreSQL type error', re: /invalid input syntax for( type)?|unsupported Unicode escape sequence|out of range for type|null value in column|duplicate key value/i },
  { label: 'database error code', re: /Database error|Code: `[0-9A-Z]{5}`/ },
  { label: 'JS runtime error', re: /\b(TypeError|RangeError|ReferenceError|SyntaxError: Unexpected)|Maximum call stack|Cannot read propert|is not a function/ },
  { label: 'gRPC internals', re: /Metadata string value|ECONN(REFUSED|RESET)|\b1[34] (UNAVAILABLE|INTERNAL)\b/ },
];

export interface Violation {
  rule: 'transport' | '5xx' | 'envelope' | 'status' | 'leak' | 'accepted' | 'alive' | 'rows' | 'unknown-field' | 'crash';
  message: string;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The exact error envelope: `{error:{code,message,requestId[,cause]}, meta:{apiEnrollmentVersion:'0.0.1', apiVersion:'0.0.1'}}`. */
export function envelopeProblems(res: FuzzResponse): string[] {
  const out: string[] = [];
  if (!/^application\/json\b/i.test(String(res.headers['content-type'] ?? ''))) out.push(`content-type ${JSON.stringify(res.headers['content-type'] ?? null)}`);
  const b = res.json;
  if (!isObj(b)) return [...out, 'body is not a JSON object'];
  const keys = Object.keys(b).sort().join(',');
  if (keys !== 'error,meta') out.push(`top-level keys ${keys}`);
  const e = b.error;
  if (!isObj(e)) return [...out, 'no error object'];
  for (const k of ['code', 'message', 'requestId']) if (typeof e[k] !== 'string' || e[k] === '') out.push(`error.${k} missing`);
  const extra = Object.keys(e).filter((k) => !['code', 'message', 'requestId', 'cause'].includes(k));
  if (extra.length) out.push(`error has ${extra.join(',')}`);
  if ('cause' in e && !isObj(e.cause)) out.push('error.cause is not an object');
  const m = b.meta;
  if (!isObj(m) || Object.keys(m).sort().join(',') !== 'apiEnrollmentVersion,apiVersion' || m.apiVersion !== '0.0.1' || m.apiEnrollmentVersion !== '0.0.1') {
    out.push(`meta is ${JSON.stringify(m)}`);
  }
  return out;
}

export function leaks(text: string): string[] {
  return LEAK_PATTERNS.filter((p) => p.re.test(text)).map((p) => p.label);
}

/** Checks one answer; `mustRefuse` inputs must not succeed. */
export function checkResponse(res: FuzzResponse, expect: Omit<Expectation, 'via'>, mustRefuse: boolean): Violation[] {
  if (res.error) return [{ rule: 'transport', message: res.error }];
  const v: Violation[] = [];
  const code = isObj(res.json) && isObj(res.json.error) ? res.json.error.code : undefined;
  const patched = expect.patches.some((p) => p.status === res.status && p.code === code);
  if (res.status >= 500) v.push({ rule: '5xx', message: `status ${res.status}` });
  else if (!expect.allowed.has(res.status) && res.status !== expect.success && !patched) {
    v.push({ rule: 'status', message: `status ${res.status} is not documented (allowed ${[...expect.allowed].sort().join(',')})` });
  }
  if (res.status >= 400) {
    const p = envelopeProblems(res);
    if (p.length) v.push({ rule: 'envelope', message: p.join('; ') });
    const l = leaks(res.text);
    if (l.length) v.push({ rule: 'leak', message: l.join(', ') });
  } else if (res.status < 300 && mustRefuse) {
    v.push({ rule: 'accepted', message: `status ${res.status} for an input the contract forbids` });
  }
  return v;
}

/** `code` / `message` / cause of an error body, for the findings. */
export function errorSummary(res: FuzzResponse): string {
  const e = isObj(res.json) && isObj(res.json.error) ? res.json.error : undefined;
  if (!e) return res.text.slice(0, 200).replace(/\s+/g, ' ');
  const cause = isObj(e.cause) ? JSON.stringify(e.cause).slice(0, 1200) : '';
  return `${String(e.code)}: ${String(e.message)}${cause ? ` cause=${cause}` : ''}`;
}
