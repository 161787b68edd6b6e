/**
 * What the fuzz suite knows of a request body, read from the route's TypeBox schema (plain JSON
 * Schema at run time): the JSON types each field accepts, every field path (nested objects, the
 * first item of arrays, a key of free-form maps), a plausible valid value for each schema, and
 * raw JSON text for values `JSON.stringify` cannot write (`-0`, `1e999`, 2^53+1).
 */

export type JsonType = 'string' | 'number' | 'boolean' | 'array' | 'object' | 'null';
export const JSON_TYPES: readonly JsonType[] = ['string', 'number', 'boolean', 'array', 'object', 'null'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Schema = Record<string, any>;
export type FieldPath = readonly (string | number)[];

export interface Field {
  path: FieldPath;
  schema: Schema;
  types: ReadonlySet<JsonType>;
  /** A key of a free-form map (`tags`, `appData`, `data`): any name is allowed there. */
  mapKey?: boolean;
  /** A property its object does not require. */
  optional?: boolean;
}

/** A value written into the JSON text as is. */
export class Raw {
  constructor(readonly text: string) {}
}

/** The JSON types a schema accepts (integer counts as number; no `type` = any). */
export function jsonTypes(s: Schema | undefined): Set<JsonType> {
  if (!s || typeof s !== 'object') return new Set(JSON_TYPES);
  if (Array.isArray(s.anyOf) || Array.isArray(s.oneOf)) {
    const out = new Set<JsonType>();
    for (const v of (s.anyOf ?? s.oneOf) as Schema[]) jsonTypes(v).forEach((t) => out.add(t));
    return out;
  }
  if (Array.isArray(s.allOf)) return jsonTypes(s.allOf[0]);
  const t = s.type;
  if (t === undefined) return new Set(JSON_TYPES);
  const list = (Array.isArray(t) ? t : [t]) as string[];
  return new Set(list.map((x) => (x === 'integer' ? 'number' : x)) as JsonType[]);
}

/** The non-null variant of a nullable union, else the schema itself. */
export function nonNull(s: Schema): Schema {
  const alts = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (!alts) return s;
  return alts.find((a) => a.type !== 'null') ?? alts[0]!;
}

function isMap(s: Schema): boolean {
  return s.type === 'object' && Object.keys(s.properties ?? {}).length === 0 && s.additionalProperties !== false;
}

/**
 * Every field of a body schema: each property (at any depth), the first item of each array, and one
 * key of each free-form map. The root itself is not a field.
 */
export function fieldsOf(root: Schema, maxDepth = 4): Field[] {
  const out: Field[] = [];
  const walk = (s: Schema, path: FieldPath, depth: number) => {
    if (depth > maxDepth) return;
    const n = nonNull(s);
    if (n.type === 'object') {
      const required = new Set((n.required ?? []) as string[]);
      for (const [k, v] of Object.entries((n.properties ?? {}) as Record<string, Schema>)) {
        out.push({ path: [...path, k], schema: v, types: jsonTypes(v), optional: !required.has(k) });
        walk(v, [...path, k], depth + 1);
      }
      if (isMap(n)) {
        const item = typeof n.additionalProperties === 'object' ? (n.additionalProperties as Schema) : {};
        out.push({ path: [...path, 'fuzzKey'], schema: item, types: jsonTypes(item), mapKey: true });
      }
    } else if (n.type === 'array' && n.items) {
      out.push({ path: [...path, 0], schema: n.items as Schema, types: jsonTypes(n.items as Schema) });
      walk(n.items as Schema, [...path, 0], depth + 1);
    }
  };
  walk(root, [], 0);
  return out;
}

/** Values for reference fields and names: real fixture ids by field name, unique names. */
export interface SampleContext {
  unique(prefix: string): string;
  /** A real id for a reference field (`identityId`, `serviceId`, `configTypeId`, …), if there is one. */
  refFor(field: string): string | undefined;
}

const FUTURE = () => new Date(Date.now() + 86_400_000).toISOString();

/** A plausible valid value: required properties only, enums' first value, ids of fixtures. */
export function sampleValue(s: Schema, ctx: SampleContext, key = ''): unknown {
  const n = nonNull(s);
  if (Array.isArray(n.enum) && n.enum.length) return n.enum[0];
  if (n.const !== undefined) return n.const;
  switch (n.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const props = (n.properties ?? {}) as Record<string, Schema>;
      for (const k of (n.required ?? []) as string[]) if (props[k]) out[k] = sampleValue(props[k], ctx, k);
      return out;
    }
    case 'array': {
      const min = Number(n.minItems ?? 0);
      return Array.from({ length: min }, () => sampleValue((n.items ?? {}) as Schema, ctx, key));
    }
    case 'integer':
    case 'number':
      return typeof n.minimum === 'number' ? n.minimum : typeof n.maximum === 'number' ? Math.min(n.maximum, 1) : 1;
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'string':
      return sampleString(n, ctx, key);
    default:
      return 'fuzz';
  }
}

function sampleString(s: Schema, ctx: SampleContext, key: string): string {
  if (s.format === 'date-time' || /At$/.test(key)) return FUTURE();
  if (s.format === 'uri' || /Url$|Endpoint$/.test(key)) return 'https://fuzz.example.com/x';
  const ref = ctx.refFor(key);
  if (ref) return ref;
  if (/password/i.test(key)) return 'Fuzz!Passw0rd-1234567';
  const v = ctx.unique(key || 's');
  const max = typeof s.maxLength === 'number' ? s.maxLength : undefined;
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  const padded = v.length < min ? v.padEnd(min, 'x') : v;
  return max !== undefined ? padded.slice(0, Math.max(max, min)) : padded;
}

/** The schema of the field at `path` (through nullable unions, object properties, array items, maps). */
export function schemaAt(root: Schema, path: FieldPath): Schema | undefined {
  let s: Schema | undefined = root;
  for (const seg of path) {
    if (!s) return undefined;
    const n = nonNull(s);
    if (typeof seg === 'number') s = n.items as Schema | undefined;
    else s = (n.properties?.[seg] as Schema | undefined) ?? (typeof n.additionalProperties === 'object' ? (n.additionalProperties as Schema) : n.additionalProperties === false ? undefined : {});
  }
  return s;
}

/**
 * A copy of `base` with `value` at `path`; missing parents are filled with a sampled value of their
 * schema (an object or a one-item array), so the mutated field is the only thing that is off.
 */
export function withValue(base: unknown, root: Schema, path: FieldPath, value: unknown, ctx: SampleContext): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  const childSchema = schemaAt(root, [head!]) ?? {};
  if (typeof head === 'number') {
    const arr = Array.isArray(base) ? [...base] : [];
    const current = arr[head] ?? (rest.length ? sampleValue(childSchema, ctx) : undefined);
    arr[head] = withValue(current, childSchema, rest, value, ctx);
    return arr;
  }
  const obj = base && typeof base === 'object' && !Array.isArray(base) ? { ...(base as Record<string, unknown>) } : {};
  const current = head! in obj ? obj[head!] : rest.length ? sampleValue(childSchema, ctx, String(head)) : undefined;
  obj[head!] = withValue(current, childSchema, rest, value, ctx);
  return obj;
}

/** A copy of `base` with an unknown property added to the root object and, when `nested`, to every object in it. */
export function withExtraField(base: unknown, name: string, value: unknown, nested: boolean): unknown {
  const add = (v: unknown, top: boolean): unknown => {
    if (Array.isArray(v)) return nested || top ? v.map((x) => add(x, top)) : v;
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = nested ? add(x, false) : x;
      if (top || nested) out[name] = value;
      return out;
    }
    return v;
  };
  return add(base, true);
}

/** JSON text of a value, with each {@link Raw} written verbatim. */
export function jsonText(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_k, v: unknown) => {
    if (v instanceof Raw) {
      raws.push(v.text);
      return `\u0001raw${raws.length - 1}\u0001`;
    }
    return v;
  });
  return (text ?? 'null').replace(/"\\u0001raw(\d+)\\u0001"/g, (_m, i: string) => raws[Number(i)]!);
}

/** A readable field path: `primary.updb.maxAttempts`, `roleAttributes[0]`. */
export function showPath(path: FieldPath): string {
  return path.reduce<string>((s, p) => (typeof p === 'number' ? `${s}[${p}]` : s ? `${s}.${p}` : p), '') || '(root)';
}
