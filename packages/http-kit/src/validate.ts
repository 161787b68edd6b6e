import { FormatRegistry, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType } from '@sinclair/typebox/errors';
import { ApiError } from '@ziti/errors';

/** RFC 3339 date-time, as go-openapi's strfmt.DateTime accepts it. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// The string formats the contract's bodies use (TypeBox refuses formats it does not know).
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => DATE_TIME.test(v) && !Number.isNaN(Date.parse(v.replace(' ', 'T'))));
if (!FormatRegistry.Has('uuid')) FormatRegistry.Set('uuid', (v) => UUID.test(v));

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

function checker(schema: TSchema): TypeCheck<TSchema> {
  let c = compiled.get(schema);
  if (!c) {
    c = TypeCompiler.Compile(schema);
    compiled.set(schema, c);
  }
  return c;
}

const fieldOf = (path: string) => path.replace(/^\//, '').replace(/\//g, '.') || '(root)';

/**
 * Checks a request body against its schema. The first failure becomes a field error
 * (400 COULD_NOT_VALIDATE with `cause.{field,reason,value}`), worded as go-openapi words it.
 */
export function validateBody<T>(schema: TSchema, body: unknown): T {
  const check = checker(schema);
  if (check.Check(body)) return body as T;
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
