import { FormatRegistry, Kind, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType } from '@sinclair/typebox/errors';
import { ApiError } from '@ziti/errors';

/** RFC 3339 date-time, as go-openapi's strfmt.DateTime accepts it. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// The string formats the contract's bodies use (TypeBox refuses formats it does not know).
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => DATE_TIME.test(v) && !Number.isNaN(Date.parse(v.replace(' ', 'T'))));
if (!FormatRegistry.Has('uuid')) FormatRegistry.Set('uuid', (v) => UUID.test(v));
// swagger's `byte`: base64 (the terminator create's `identitySecret`).
if (!FormatRegistry.Has('byte')) FormatRegistry.Set('byte', (v) => v.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(v));

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

function checker(schema: TSchema): TypeCheck<TSchema> {
  let c = compiled.get(schema);
  if (!c) {
    c = TypeCompiler.Compile(schema);
    compiled.set(schema, c);
  }
  return c;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const isSchema = (v: unknown): v is TSchema => isObject(v) && Kind in v;

/**
 * Removes, in place, the fields of `value` that `schema` does not name where it closes an object
 * (`additionalProperties: false`), as OpenZiti's controller ignores body fields its models do not
 * know (go-openapi decodes into structs): a newer SDK that sends one more field is not refused.
 * Fields the schema names keep every check; free-form maps (`additionalProperties` true or a
 * schema) keep their entries. Of a union, the first member that the value fits once stripped is
 * the one it is stripped by.
 */
function stripUnknown(schema: TSchema, value: unknown): void {
  switch (schema[Kind]) {
    case 'Object': {
      if (!isObject(value)) return;
      const props = (schema.properties ?? {}) as Record<string, TSchema>;
      const extra = schema.additionalProperties as unknown;
      const required = new Set((schema.required ?? []) as string[]);
      for (const key of Object.keys(value)) {
        // An optional list sent as null is an empty one, as OpenZiti's Go models read it (nil slice):
        // OpenZiti's own CLI sends `"configs": null`.
        if (Object.hasOwn(props, key) && value[key] === null && !required.has(key) && props[key]![Kind] === 'Array') value[key] = [];
        if (Object.hasOwn(props, key)) stripUnknown(props[key]!, value[key]);
        else if (extra === false) delete value[key];
        else if (isSchema(extra)) stripUnknown(extra, value[key]);
      }
      return;
    }
    case 'Intersect':
      // Each member strips only inside the fields it names: a member's own closure would drop the others' fields.
      for (const member of schema.allOf as TSchema[]) {
        if (member[Kind] !== 'Object') stripUnknown(member, value);
        else if (isObject(value)) {
          const props = (member.properties ?? {}) as Record<string, TSchema>;
          for (const key of Object.keys(props)) if (Object.hasOwn(value, key)) stripUnknown(props[key]!, value[key]);
        }
      }
      return;
    case 'Array':
      if (Array.isArray(value)) for (const item of value) stripUnknown(schema.items as TSchema, item);
      return;
    case 'Union':
      for (const member of schema.anyOf as TSchema[]) {
        if (isObject(value) || Array.isArray(value)) {
          const copy = structuredClone(value);
          stripUnknown(member, copy);
          if (!checker(member).Check(copy)) continue;
        } else if (!checker(member).Check(value)) continue;
        stripUnknown(member, value);
        return;
      }
      return;
    default:
      return;
  }
}

/**
 * The first finding of `at` in `value`, walking it along `schema` (object properties and
 * additional properties, intersections, array items, the union member that matches): `at` is
 * asked at every node, parents before children, and the first answer wins.
 */
function firstInSchema<F>(schema: TSchema, value: unknown, path: string, at: (schema: TSchema, value: unknown, path: string) => F | undefined): F | undefined {
  const here = at(schema, value, path);
  if (here !== undefined) return here;
  switch (schema[Kind]) {
    case 'Object': {
      if (!isObject(value)) return undefined;
      const props = (schema.properties ?? {}) as Record<string, TSchema>;
      const extra = schema.additionalProperties as unknown;
      for (const key of Object.keys(value)) {
        const inner = Object.hasOwn(props, key) ? props[key]! : isSchema(extra) ? extra : undefined;
        const found = inner && firstInSchema(inner, value[key], path ? `${path}.${key}` : key, at);
        if (found !== undefined) return found;
      }
      return undefined;
    }
    case 'Intersect':
      for (const member of schema.allOf as TSchema[]) {
        const found = firstInSchema(member, value, path, at);
        if (found !== undefined) return found;
      }
      return undefined;
    case 'Array':
      if (!Array.isArray(value)) return undefined;
      for (let i = 0; i < value.length; i++) {
        const found = firstInSchema(schema.items as TSchema, value[i], path ? `${path}.${i}` : String(i), at);
        if (found !== undefined) return found;
      }
      return undefined;
    case 'Union': {
      const member = (schema.anyOf as TSchema[]).find((m) => checker(m).Check(value));
      return member ? firstInSchema(member, value, path, at) : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * The first integer in `value` (and its path) that is not a safe integer (beyond ±2^53-1 a JSON number
 * is no longer the integer that was sent, and no column holds 1e308), or undefined. The spec's
 * integers are int64; the contexts store them in integer columns.
 */
function firstUnsafeInteger(schema: TSchema, value: unknown, path: string): { path: string; value: number } | undefined {
  return firstInSchema(schema, value, path, (s, v, p) => (s[Kind] === 'Integer' && typeof v === 'number' && !Number.isSafeInteger(v) ? { path: p, value: v } : undefined));
}

/**
 * The first value in `value` (and its path) whose schema carries `maxJsonBytes` (the contract's
 * `Tags`) and whose JSON is longer than that many UTF-8 bytes, or undefined.
 */
function firstOversized(schema: TSchema, value: unknown, path: string): { path: string; bytes: number; max: number } | undefined {
  return firstInSchema(schema, value, path, (s, v, p) => {
    const max = s.maxJsonBytes as unknown;
    if (typeof max !== 'number' || v === undefined) return undefined;
    const bytes = Buffer.byteLength(JSON.stringify(v));
    return bytes > max ? { path: p, bytes, max } : undefined;
  });
}

const fieldOf = (path: string) => path.replace(/^\//, '').replace(/\//g, '.') || '(root)';

/**
 * Checks a request body against its schema, after dropping the fields it does not name (see
 * `stripUnknown`; `body` is changed in place). The first failure becomes a field error
 * (400 COULD_NOT_VALIDATE with `cause.{field,reason,value}`), worded as go-openapi words it.
 * Beyond JSON Schema, a schema may carry `maxJsonBytes` (the contract's `Tags`): the JSON of the
 * value there is at most that many UTF-8 bytes (the cause's value is the size sent).
 */
export function validateBody<T>(schema: TSchema, body: unknown): T {
  const check = checker(schema);
  stripUnknown(schema, body);
  if (check.Check(body)) {
    const unsafe = firstUnsafeInteger(schema, body, '');
    if (unsafe !== undefined) {
      const bound = unsafe.value < 0 ? `greater than or equal to ${Number.MIN_SAFE_INTEGER}` : `less than or equal to ${Number.MAX_SAFE_INTEGER}`;
      throw ApiError.field(unsafe.path, `${unsafe.path} in body should be ${bound}`, unsafe.value);
    }
    const oversized = firstOversized(schema, body, '');
    // The value is its size, not the value: echoing a megabyte back would help no one.
    if (oversized !== undefined) {
      const field = oversized.path || '(root)';
      throw ApiError.field(field, `${field} in body should be at most ${oversized.max} bytes of JSON`, `${oversized.bytes} bytes`);
    }
    return body as T;
  }
  const first = check.Errors(body).First();
  if (!first) throw ApiError.of('COULD_NOT_VALIDATE');
  const field = fieldOf(first.path);
  switch (first.type) {
    case ValueErrorType.ObjectRequiredProperty:
      throw ApiError.field(field, `${field} in body is required`, first.value);
    case ValueErrorType.ObjectAdditionalProperties:
      throw ApiError.field(field, `${field} in body is not an allowed property`, first.value);
    case ValueErrorType.String:
    case ValueErrorType.Number:
    case ValueErrorType.Integer:
    case ValueErrorType.Boolean:
    case ValueErrorType.Object:
    case ValueErrorType.Array:
      throw ApiError.field(field, `${field} in body must be of type ${first.schema.type}: "${jsonType(first.value)}"`, first.value);
    default:
      throw ApiError.field(field, `${field} in body ${first.message.replace(/^Expected/, 'must be').toLowerCase()}`, first.value);
  }
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}
