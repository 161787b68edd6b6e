import type { ApiName, RouteDef } from '@ziti/api-contract';
import fc from 'fast-check';
import type { FuzzRequest } from './fuzz-http.js';
import { JSON_TYPES, type JsonType, Raw, type SampleContext, type Schema, fieldsOf, jsonText, sampleValue, showPath, withValue } from './fuzz-schema.js';
import {
  BAD_FILTERS, BAD_INTEGERS, BAD_PATH_IDS, BAD_QUERY_VALUES, BAD_SORTS, BOUNDARY_NUMBERS, anyJsonArb, deepArray, deepObject, filterArb,
  intQueryArb, nastyString, pct,
} from './fuzz-values.js';

/**
 * The inputs of one operation, derived from its route (path parameters, query schema, body
 * schema) alone, so a new route is fuzzed with no change here. Fixed catalogues give every
 * operation each hostile case; fast-check adds a few seeded random ones per kind.
 */

export type Caller = 'admin' | 'nonadmin' | 'none';
export const CALLERS: readonly Caller[] = ['admin', 'nonadmin', 'none'];

export interface Target {
  api: ApiName;
  route: RouteDef;
}

export const BASES: Record<ApiName, string> = { client: '/edge/client/v1', management: '/edge/management/v1', fabric: '/fabric/v1' };

export interface FuzzInput {
  /** Family of the input: `path`, `query`, `body:malformed`, `body:wrong-type`, `body:nul`, … */
  kind: string;
  detail: string;
  req: FuzzRequest;
  /** The contract forbids this input outright: answering it with a success is a finding too. */
  mustRefuse?: boolean;
}

export interface InputContext extends SampleContext {
  /** A real id for a path parameter (e.g. the fixture identity for `/identities/{id}`), if there is one. */
  realId(routePath: string, param: string): string | undefined;
  seed: number;
}

/** Whether a caller gets past the route's access rule (non-admins hold no management permission). */
export function permitted(route: RouteDef, caller: Caller): boolean {
  if (route.access === 'anonymous') return true;
  if (caller === 'none') return false;
  if (route.access === 'admin' || route.access === 'management') return caller === 'admin';
  return true;
}

export function pathParams(path: string): string[] {
  return [...path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]!);
}

const NO_SUCH_ID = 'fuzzNoSuchId0';

export class InputBuilder {
  private readonly params: string[];
  private readonly defaults: Record<string, string>;
  private readonly body?: Schema;
  private readonly query?: Schema;
  readonly inputs: FuzzInput[] = [];

  constructor(
    readonly target: Target,
    private readonly ctx: InputContext,
  ) {
    const { route } = target;
    this.params = pathParams(route.path);
    // A DELETE with a real id would delete the fixture the other operations use: bogus ids only.
    this.defaults = Object.fromEntries(this.params.map((p) => [p, route.method === 'DELETE' ? NO_SUCH_ID : pct(ctx.realId(route.path, p) ?? NO_SUCH_ID)]));
    this.body = route.body as Schema | undefined;
    this.query = route.query as Schema | undefined;
  }

  /** A valid-looking body: required fields, enum defaults, fixture ids for references, unique names. */
  validBody(): unknown {
    return this.body ? sampleValue(this.body, this.ctx) : undefined;
  }

  /** The request target with some parameters and query overridden (values already encoded). */
  url(params: Record<string, string> = {}, query?: string): string {
    let p = this.target.route.path;
    for (const name of this.params) p = p.replace(`{${name}}`, params[name] ?? this.defaults[name]!);
    const q = query ?? this.defaultQuery();
    return `${BASES[this.target.api]}${p}${q ? `?${q}` : ''}`;
  }

  /** The required query parameters with plausible values (e.g. `method=password`). */
  defaultQuery(except?: string): string {
    const q = this.query;
    if (!q) return '';
    const parts: string[] = [];
    for (const k of (q.required ?? []) as string[]) if (k !== except) parts.push(`${k}=${pct(String(sampleValue(q.properties[k], this.ctx, k)))}`);
    return parts.join('&');
  }

  private add(kind: string, detail: string, req: Partial<FuzzRequest>, mustRefuse = false): void {
    const r = this.target.route;
    const body = req.body ?? (this.body && r.method !== 'GET' ? Buffer.from(jsonText(this.validBody())) : undefined);
    this.inputs.push({ kind, detail, mustRefuse, req: { method: r.method, target: req.target ?? this.url(), headers: req.headers, rawHeaderLines: req.rawHeaderLines, body } });
  }

  private sample<T>(arb: fc.Arbitrary<T>, n: number, salt: string): T[] {
    return fc.sample(arb, { seed: (this.ctx.seed ^ hash(salt)) | 0, numRuns: n });
  }

  /** Everything: the full catalogue for a caller the route admits. */
  build(caller: Caller): FuzzInput[] {
    this.add('baseline', 'valid-looking request with real ids', {});
    this.pathInputs();
    this.queryInputs();
    this.headerInputs(caller);
    if (this.body) this.bodyInputs();
    return this.inputs;
  }

  pathInputs(): void {
    for (const p of this.params) {
      for (const bad of BAD_PATH_IDS) this.add('path', `{${p}} = ${bad.label}`, { target: this.url({ [p]: bad.value }) });
      for (const s of this.sample(nastyString(20).filter((x) => x.length > 0), 3, `path:${p}`)) this.add('path', `{${p}} = random ${JSON.stringify(s)}`, { target: this.url({ [p]: pct(s) }) });
    }
  }

  queryInputs(): void {
    const props = (this.query?.properties ?? {}) as Record<string, Schema>;
    const withParam = (key: string, encoded: string) => {
      const rest = this.defaultQuery(key);
      return this.url({}, [rest, `${key}=${encoded}`].filter(Boolean).join('&'));
    };
    if (!this.query) {
      this.add('query', 'unknown parameter with NUL', { target: this.url({}, 'fuzzParam=a%00b') });
      return;
    }
    for (const [key, s] of Object.entries(props)) {
      if (key === 'filter') {
        for (const f of BAD_FILTERS) this.add('query:filter', `filter ${f.label}`, { target: withParam('filter', f.rawEncoded ?? pct(f.value!)) });
        for (const f of this.sample(filterArb, 5, 'filter')) this.add('query:filter', `filter random ${JSON.stringify(f)}`, { target: withParam('filter', pct(f)) });
      } else if (s.type === 'integer' || s.type === 'number') {
        const values = key === 'limit' ? BAD_INTEGERS : BAD_INTEGERS.filter((_, i) => i % 3 === 0);
        for (const v of values) this.add('query:paging', `${key}=${v}`, { target: withParam(key, v) });
        for (const v of this.sample(intQueryArb, 2, key)) this.add('query:paging', `${key} random ${JSON.stringify(v)}`, { target: withParam(key, pct(v)) });
      } else {
        for (const v of BAD_QUERY_VALUES) this.add('query:param', `${key} = ${v.label}`, { target: withParam(key, v.value) });
        this.add('query:param', `${key} repeated`, { target: withParam(key, `a&${key}=b`) });
        for (const v of this.sample(nastyString(16), 2, key)) this.add('query:param', `${key} random ${JSON.stringify(v)}`, { target: withParam(key, pct(v)) });
      }
    }
    // `sort` is honoured by every list though the contract does not declare it (reference §4.1).
    if ('limit' in props) for (const v of BAD_SORTS) this.add('query:sort', `sort=${v}`, { target: withParam('sort', v === '%00 asc' ? '%00%20asc' : pct(v)) });
  }

  /** Bytes of a lone surrogate (UTF-8 of U+D800) in the session header, or beside a session as a bearer token. */
  headerInputs(caller: Caller): void {
    const surrogate = Buffer.from([0xed, 0xa0, 0x80]);
    if (caller === 'none') this.add('header', 'zt-session of lone-surrogate bytes', { rawHeaderLines: [Buffer.concat([Buffer.from('zt-session: x'), surrogate, Buffer.from('y')])] });
    else this.add('header', 'Authorization: Bearer of lone-surrogate bytes', { rawHeaderLines: [Buffer.concat([Buffer.from('authorization: Bearer x'), surrogate])] });
  }

  bodyInputs(): void {
    const schema = this.body!;
    const rootArray = schema.type === 'array';
    // Every input gets a body of its own (fresh unique names), so one that is accepted does not
    // turn the next into a name conflict.
    const base = () => jsonText(this.validBody());
    const optional = this.target.route.bodyOptional === true;
    const raw = (kind: string, detail: string, body: Buffer | string, mustRefuse: boolean, headers?: Record<string, string>) =>
      this.add(kind, detail, { body: Buffer.isBuffer(body) ? body : Buffer.from(body), headers }, mustRefuse);

    raw('body:malformed', 'truncated', base().slice(0, -1), true);
    raw('body:malformed', 'truncated after a quote', rootArray ? '[{"' : '{"', true);
    raw('body:malformed', 'trailing garbage', `${base()} x`, true);
    raw('body:malformed', 'extra closing bracket', `${base()}${rootArray ? ']' : '}'}`, true);
    raw('body:malformed', 'NUL byte after the value', `${base()}\u0000`, true);
    for (const bare of ['1', '"str"', 'true', 'null', rootArray ? '{}' : '[]']) raw('body:malformed', `bare value ${bare}`, bare, !(optional && bare === 'null'));
    raw('body:malformed', 'empty', '', false);
    raw('body:malformed', 'invalid UTF-8 outside strings', Buffer.concat([Buffer.from(rootArray ? '[' : '{'), Buffer.from([0xff, 0xfe]), Buffer.from(rootArray ? ']' : '}')]), true);
    raw('body:malformed', 'invalid UTF-8 inside a string', Buffer.concat([Buffer.from(rootArray ? '["' : '{"fuzz":"'), Buffer.from([0xc3, 0x28, 0xa0, 0xa1]), Buffer.from(rootArray ? '"]' : '"}')]), false);
    raw('body:malformed', 'UTF-8 BOM before the value', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(base())]), false);
    raw('body:malformed', 'UTF-16LE encoded', Buffer.from(base(), 'utf16le'), true);
    raw('body:malformed', 'content-type text/plain', base(), false, { 'content-type': 'text/plain' });
    raw('body:deep', `${5000}-deep arrays as the body`, deepArray(), true);
    raw('body:deep', `${5000}-deep objects as the body`, rootArray ? `[${deepObject()}]` : deepObject(), false);

    const fields = fieldsOf(schema);
    const put = (kind: string, path: readonly (string | number)[], value: unknown, detail: string, mustRefuse: boolean) =>
      raw(kind, `${showPath(path)}: ${detail}`, jsonText(withValue(this.validBody(), schema, path, value, this.ctx)), mustRefuse);
    if (fields[0]) put('body:deep', fields[0].path, new Raw(deepArray()), '5000-deep arrays as the value', false);

    for (const f of fields) {
      // An optional list sent as null reads as an empty list, as OpenZiti's Go models read it (its CLI sends `"configs": null`).
      const nullList = (t: string) => t === 'null' && f.optional === true && f.types.has('array');
      for (const t of JSON_TYPES) if (!f.types.has(t)) put('body:wrong-type', f.path, wrongValue(t, f.types), `${t} instead of ${[...f.types].join('|')}`, !nullList(t));
      if (f.mapKey) {
        const parent = f.path.slice(0, -1);
        put('body:nul', [...parent, 'k\u0000ey'], exampleOf(f.types), 'NUL in a map key', false);
        put('body:surrogate', [...parent, 'k\ud800ey'], exampleOf(f.types), 'lone surrogate in a map key', false);
      }
      if (f.types.has('string')) {
        put('body:nul', f.path, 'fu\u0000zz', 'NUL in the string', false);
        put('body:surrogate', f.path, 'fu\ud800zz', 'lone surrogate in the string', false);
      }
      if (f.types.has('number')) for (const n of BOUNDARY_NUMBERS) put('body:number', f.path, n.raw !== undefined ? new Raw(n.raw) : n.str, n.label, n.str !== undefined && !f.types.has('string'));
    }

    for (const v of this.sample(fc.jsonValue({ maxDepth: 3 }), 2, 'body:random')) raw('body:random', `random JSON ${jsonText(v).slice(0, 60)}`, jsonText(v), false);
    const props = fields.filter((f) => f.path.length === 1);
    const shaped = fc.tuple(...props.map(() => fc.oneof(fc.constant<'valid'>('valid'), fc.constant<'absent'>('absent'), anyJsonArb)));
    for (const choice of props.length ? this.sample(shaped, 4, 'body:shaped') : []) {
      let b: unknown = this.validBody();
      props.forEach((f, i) => {
        const c = choice[i];
        if (c === 'valid') return;
        if (c === 'absent') {
          if (b && typeof b === 'object' && !Array.isArray(b)) delete (b as Record<string, unknown>)[f.path[0] as string];
          return;
        }
        b = withValue(b, schema, f.path, c, this.ctx);
      });
      raw('body:random', `schema-shaped with random values ${jsonText(b).slice(0, 80)}`, jsonText(b), false);
    }
  }
}

function wrongValue(t: JsonType, accepted: ReadonlySet<JsonType>): unknown {
  switch (t) {
    case 'string':
      return accepted.has('number') ? '1' : accepted.has('boolean') ? 'true' : 'fuzz';
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return {};
    case 'null':
      return null;
  }
}

function exampleOf(types: ReadonlySet<JsonType>): unknown {
  return types.has('string') ? 'v' : types.has('number') ? 1 : types.has('boolean') ? true : null;
}

function hash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/**
 * The inputs one caller sends to one operation. A caller the route admits gets the full
 * catalogue; one it refuses (its answer is decided by the access check, before any handler)
 * gets the first input of each kind, which is enough to see that refusal never breaks.
 */
export function inputsFor(target: Target, caller: Caller, ctx: InputContext): FuzzInput[] {
  const all = new InputBuilder(target, ctx).build(caller);
  if (permitted(target.route, caller)) return all;
  const seen = new Set<string>();
  return all.filter((i) => !seen.has(i.kind) && seen.add(i.kind));
}
