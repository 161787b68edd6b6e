import { Type } from '@sinclair/typebox';
import { ApiError } from '@ziti/errors';
import { common } from '@ziti/api-contract';
import { validateBody } from './validate.js';

const nullable = <T extends ReturnType<typeof Type.Object>>(t: T) => Type.Union([t, Type.Null()]);

describe('validateBody and fields the model does not name', () => {
  const Inner = Type.Object({ a: Type.String() }, { additionalProperties: false });
  const Model = Type.Object(
    {
      name: Type.String(),
      inner: Type.Optional(nullable(Inner)),
      list: Type.Optional(Type.Array(Inner)),
      tags: Type.Optional(Type.Object({}, { additionalProperties: true })),
      counts: Type.Optional(Type.Object({}, { additionalProperties: Inner })),
    },
    { additionalProperties: false },
  );

  it('drops them at every level where the model closes an object, and keeps free-form maps whole', () => {
    const body = {
      name: 'n',
      extra: 1,
      inner: { a: 'x', more: true },
      list: [{ a: 'y', z: 0 }],
      tags: { anything: { goes: 1 } },
      counts: { k: { a: 'v', drop: 1 } },
    };
    expect(validateBody(Model, body)).toEqual({ name: 'n', inner: { a: 'x' }, list: [{ a: 'y' }], tags: { anything: { goes: 1 } }, counts: { k: { a: 'v' } } });
  });

  it('reads an optional list sent as null as an empty list (OpenZiti CLI bodies), and still refuses null where a list is required', () => {
    expect(validateBody(Model, { name: 'n', list: null })).toEqual({ name: 'n', list: [] });
    const Required = Type.Object({ list: Type.Array(Type.String()) });
    expect(() => validateBody(Required, { list: null })).toThrow(ApiError);
    expect(() => validateBody(Model, { name: null })).toThrow(ApiError);
  });

  it('keeps checking the fields it names, inside unions too', () => {
    const err = (body: unknown) => {
      try {
        validateBody(Model, body);
      } catch (e) {
        return (e as ApiError).cause?.field;
      }
      return undefined;
    };
    expect(err({ name: 1, extra: 1 })).toBe('name');
    expect(err({ name: 'n', list: [{ a: 2, z: 0 }] })).toBe('list.0.a');
    expect(err({ name: 'n', inner: { a: 5, more: 1 } })).toBe('inner');
    expect(validateBody(Model, { name: 'n', inner: null })).toEqual({ name: 'n', inner: null });
  });

  it('strips by the union member the value fits, and by every member of an intersection', () => {
    const A = Type.Object({ kind: Type.Literal('a'), x: Type.String() }, { additionalProperties: false });
    const B = Type.Object({ kind: Type.Literal('b'), y: Type.Number() }, { additionalProperties: false });
    expect(validateBody(Type.Union([A, B]), { kind: 'b', y: 1, x: 'dropped', other: 2 })).toEqual({ kind: 'b', y: 1 });
    const Both = Type.Intersect([Type.Object({ id: Type.String() }), Type.Object({ n: Type.Optional(Inner) })], { unevaluatedProperties: false });
    expect(validateBody(Both, { id: 'i', n: { a: 'x', drop: 1 } })).toEqual({ id: 'i', n: { a: 'x' } });
  });
});

describe('validateBody and integers', () => {
  const Model = Type.Object({
    n: Type.Optional(Type.Integer()),
    nested: Type.Optional(Type.Object({ list: Type.Array(Type.Integer()) })),
    ratio: Type.Optional(Type.Number()),
    costs: Type.Optional(Type.Object({}, { additionalProperties: Type.Integer() })),
  });
  const fieldOf = (body: unknown) => {
    try {
      validateBody(Model, body);
      return undefined;
    } catch (e) {
      return [(e as ApiError).code, (e as ApiError).cause?.field, (e as ApiError).cause?.reason];
    }
  };

  it('refuses an integer beyond the safe range (it is not the integer that was sent) as a field error', () => {
    expect(fieldOf({ n: 2 ** 53 + 2 })).toEqual(['COULD_NOT_VALIDATE', 'n', 'n in body should be less than or equal to 9007199254740991']);
    expect(fieldOf({ n: 1e308 })).toEqual(['COULD_NOT_VALIDATE', 'n', 'n in body should be less than or equal to 9007199254740991']);
    expect(fieldOf({ n: -1e20 })).toEqual(['COULD_NOT_VALIDATE', 'n', 'n in body should be greater than or equal to -9007199254740991']);
    expect(fieldOf({ nested: { list: [1, 2, 1e300] } })?.[1]).toBe('nested.list.2');
    expect(fieldOf({ costs: { 'a.b': 1e300 } })?.[1]).toBe('costs.a.b'); // a key with a dot in a free-form map
  });

  it('keeps safe integers, and numbers that are not integers by the model', () => {
    expect(fieldOf({ n: 2 ** 53 - 1, nested: { list: [-(2 ** 53 - 1)] }, ratio: 1e308 })).toBeUndefined();
  });
});

describe('validateBody and the size of tags', () => {
  const { MAX_TAGS_JSON_BYTES, Tags } = common;
  const Model = Type.Object({
    tags: Type.Optional(Tags),
    nested: Type.Optional(Type.Array(Type.Object({ tags: Tags }))),
    other: Type.Optional(Type.Object({}, { additionalProperties: true })),
  });
  const refusal = (body: unknown) => {
    try {
      validateBody(Model, body);
      return undefined;
    } catch (e) {
      return [(e as ApiError).code, (e as ApiError).status, (e as ApiError).cause?.field, (e as ApiError).cause?.reason, (e as ApiError).cause?.value];
    }
  };
  /** Tags whose JSON is exactly `bytes` long: `{"k":"…"}`. */
  const tagsOf = (bytes: number, char = 'x') => ({ k: char.repeat((bytes - 8) / Buffer.byteLength(char)) });

  it('is 16 KiB of JSON', () => {
    expect(MAX_TAGS_JSON_BYTES).toBe(16384);
    expect(Buffer.byteLength(JSON.stringify(tagsOf(16384)))).toBe(16384);
  });

  it('takes tags up to the bound, and null or no tags', () => {
    expect(refusal({ tags: tagsOf(MAX_TAGS_JSON_BYTES) })).toBeUndefined();
    expect(refusal({ tags: null, nested: [{ tags: {} }] })).toBeUndefined();
    expect(refusal({ other: tagsOf(100_000) })).toBeUndefined(); // only fields whose model is the tags model
  });

  it('refuses larger tags as a field error that reports the size, not the value', () => {
    expect(refusal({ tags: tagsOf(MAX_TAGS_JSON_BYTES + 2) })).toEqual([
      'COULD_NOT_VALIDATE', 400, 'tags', 'tags in body should be at most 16384 bytes of JSON', '16386 bytes',
    ]);
    expect(refusal({ nested: [{ tags: {} }, { tags: tagsOf(900_008) }] })?.[2]).toBe('nested.1.tags');
  });

  it('counts bytes, not characters, and counts keys and nesting as well as values', () => {
    expect(refusal({ tags: tagsOf(MAX_TAGS_JSON_BYTES + 1, '\u00e9') })).toBeUndefined(); // (16385 - 8) / 2 characters round down to 16384 bytes
    expect(refusal({ tags: tagsOf(MAX_TAGS_JSON_BYTES + 2, '\u00e9') })?.[2]).toBe('tags');
    const manyKeys = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`key-${i}`, true]));
    expect(refusal({ tags: manyKeys })?.[2]).toBe('tags');
    expect(refusal({ tags: { a: { b: { c: 'x'.repeat(MAX_TAGS_JSON_BYTES) } } } })?.[2]).toBe('tags');
  });
});
