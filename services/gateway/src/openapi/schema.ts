/**
 * TypeBox (JSON Schema) → swagger 2.0 schema objects, following the contract's conventions:
 * - a nested schema with an `$id` is a named definition: `$ref: #/definitions/<$id>`;
 * - `Union([T, Null])` is T with `x-nullable: true`;
 * - `Intersect` is `allOf`; unions of literals are enums; records are `additionalProperties`;
 * - keywords swagger 2.0 lacks are dropped (other unions are kept as `x-anyOf`).
 */

export type Json = Record<string, unknown>;

const PASSTHROUGH = new Set([
  'format', 'title', 'description', 'default', 'multipleOf', 'maximum', 'minimum', 'maxLength', 'minLength', 'pattern',
  'maxItems', 'minItems', 'uniqueItems', 'maxProperties', 'minProperties', 'enum', 'example', 'readOnly',
]);

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const refTo = (id: string) => ({ $ref: `#/definitions/${id}` });

/** Schemas alongside a `$ref` are ignored in swagger 2.0: wrap the reference in `allOf`. */
function withExtras(converted: Json, extras: Json): Json {
  if (Object.keys(extras).length === 0) return converted;
  if ('$ref' in converted) return { allOf: [converted], ...extras };
  return { ...converted, ...extras };
}

/** Collects the `definitions` of a document while converting the schemas that use them. */
export class DefinitionSet {
  readonly definitions: Record<string, Json> = {};

  /** `named`: the contract's models by `$id`, resolvable from bare `$ref`s (`Type.Ref`). */
  constructor(private readonly named: Readonly<Record<string, unknown>> = {}) {}

  /** Registers a named model (converting its body once) and returns the reference to it. */
  define(id: string, schema: unknown): Json {
    if (!(id in this.definitions)) {
      this.definitions[id] = {};
      this.definitions[id] = this.body(schema);
    }
    return refTo(id);
  }

  /** A schema as used somewhere: a reference when it is named, else converted inline. */
  convert(schema: unknown): Json {
    if (!isObject(schema)) return {};
    if (typeof schema.$id === 'string') return this.define(schema.$id, schema);
    return this.body(schema);
  }

  private reference(ref: string): Json {
    const id = ref.replace(/^#\/definitions\//, '');
    if (!(id in this.definitions) && id in this.named) this.define(id, this.named[id]);
    return refTo(id);
  }

  /** The schema's own content (its `$id` ignored). */
  private body(schema: unknown): Json {
    if (!isObject(schema)) return {};
    if (typeof schema.$ref === 'string') return this.reference(schema.$ref);

    const extras: Json = {};
    for (const [k, v] of Object.entries(schema)) {
      if (k.startsWith('x-') || PASSTHROUGH.has(k)) extras[k] = v;
    }
    if ('const' in schema) extras.enum = [schema.const];
    if (typeof schema.exclusiveMinimum === 'number') Object.assign(extras, { minimum: schema.exclusiveMinimum, exclusiveMinimum: true });
    if (typeof schema.exclusiveMaximum === 'number') Object.assign(extras, { maximum: schema.exclusiveMaximum, exclusiveMaximum: true });

    const variants = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
    if (Array.isArray(variants)) return this.union(variants, extras);

    const out: Json = {};
    let type = schema.type;
    if (Array.isArray(type)) {
      const nonNull = type.filter((t) => t !== 'null');
      if (nonNull.length < type.length) extras['x-nullable'] = true;
      type = nonNull[0];
    }
    if (typeof type === 'string' && type !== 'null') out.type = type;
    if (Array.isArray(schema.allOf)) out.allOf = schema.allOf.map((s) => this.convert(s));
    if (type === 'array' && schema.items !== undefined) out.items = this.convert(schema.items);
    if (isObject(schema.properties) && Object.keys(schema.properties).length > 0) {
      out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, this.convert(v)]));
    }
    if (Array.isArray(schema.required) && schema.required.length > 0) out.required = [...schema.required];
    if (typeof schema.additionalProperties === 'boolean') out.additionalProperties = schema.additionalProperties;
    else if (isObject(schema.additionalProperties)) out.additionalProperties = this.convert(schema.additionalProperties);
    if (isObject(schema.patternProperties) && out.additionalProperties === undefined) {
      const values = Object.values(schema.patternProperties);
      if (values.length === 1) out.additionalProperties = this.convert(values[0]);
    }
    return { ...out, ...extras };
  }

  private union(variants: unknown[], extras: Json): Json {
    const nonNull = variants.filter((v) => !(isObject(v) && v.type === 'null'));
    if (nonNull.length < variants.length) extras['x-nullable'] = true;
    if (nonNull.length === 1) return withExtras(this.convert(nonNull[0]), extras);
    const literals = nonNull.filter((v): v is Json => isObject(v) && 'const' in v);
    if (literals.length === nonNull.length && literals.length > 0) {
      const types = new Set(literals.map((l) => typeof l.const));
      const type = types.size === 1 ? [...types][0] : undefined;
      return { ...(type === 'string' || type === 'boolean' ? { type } : type === 'number' ? { type: 'number' } : {}), enum: literals.map((l) => l.const), ...extras };
    }
    return { 'x-anyOf': nonNull.map((v) => this.convert(v)), ...extras };
  }
}
