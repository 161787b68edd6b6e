import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { ApiError } from '@ziti/errors';

/**
 * JSON-schema handling of config types and configs (draft-07, as the controller's gojsonschema).
 * Formats ajv-formats lacks (idn-hostname) are accepted as any string, as loosely as the
 * controller's own schemas describe them.
 */
function newAjv(): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: false, validateSchema: true, addUsedSchema: false });
  addFormats(ajv);
  ajv.addFormat('idn-hostname', true);
  ajv.addFormat('idn-email', true);
  return ajv;
}

const cache = new Map<string, ValidateFunction>();

/** Compiles a config type's schema; an invalid schema is a field error on `schema`. */
export function compileSchema(schema: Record<string, unknown>, cacheKey?: string): ValidateFunction {
  const hit = cacheKey ? cache.get(cacheKey) : undefined;
  if (hit) return hit;
  let fn: ValidateFunction;
  try {
    fn = newAjv().compile(schema);
  } catch (err) {
    throw ApiError.field('schema', `invalid schema: ${(err as Error).message}`, schema);
  }
  if (cacheKey) {
    if (cache.size > 500) cache.clear();
    cache.set(cacheKey, fn);
  }
  return fn;
}

/**
 * Validates config data; the first failure becomes `{field, reason: "<field> is invalid: <msg>", value}`
 * with `(root)` for the document itself, as the controller renders gojsonschema errors.
 */
export function validateData(validate: ValidateFunction, data: unknown): void {
  if (validate(data)) return;
  const e = (validate.errors ?? [])[0] as ErrorObject | undefined;
  if (!e) throw ApiError.field('(root)', '(root) is invalid', data);
  const path = e.instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const field = path.length > 0 ? path.join('.') : '(root)';
  const value = path.reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), data);
  throw ApiError.field(field, `${field} is invalid: ${message(e)}`, value);
}

function message(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return `${String(p.missingProperty)} is required`;
    case 'additionalProperties':
      return `Additional property ${String(p.additionalProperty)} is not allowed`;
    case 'type':
      return `Invalid type. Expected: ${String(p.type)}`;
    case 'enum':
      return `must be one of the following: ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return e.message ?? e.keyword;
  }
}
