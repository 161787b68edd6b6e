import { type TSchema, Type } from '@sinclair/typebox';

/**
 * Shapes shared by every context's models (links, entity references, tags, meta, pagination,
 * the empty and create envelopes, the base entity), named after the OpenZiti swagger definitions.
 *
 * Conventions, for models and for the OpenAPI generator:
 * - A nested schema that carries an `$id` is a named definition: emitted as `$ref: #/definitions/<$id>`.
 * - `x-nullable` fields are `nullable(T)`: emitted as T with `x-nullable: true`.
 * - `allOf` definitions are `Type.Intersect` (emitted as `allOf`).
 * - Enums are `Type.String({ enum })`: the spec's shape. TypeBox does not check `enum`, so services
 *   validate them in the domain (with go-openapi's wording).
 * - Free-form maps (tags, appData, cost/precedence maps) are objects with `additionalProperties`.
 */

export const nullable = <T extends TSchema>(schema: T, options: Record<string, unknown> = {}) =>
  Type.Union([schema, Type.Null()], { 'x-nullable': true, ...options });

export const envelope = (id: string, data: TSchema) => Type.Object({ data, meta: Meta }, { $id: id });

// ---------------------------------------------------------------- shared shapes

export const Link = Type.Object(
  {
    comment: Type.Optional(Type.String()),
    href: Type.String({ format: 'uri' }),
    method: Type.Optional(Type.String()),
  },
  { $id: 'link', description: 'A link to another resource' },
);

export const Links = Type.Object({}, { $id: 'links', description: 'A map of named links', additionalProperties: Link, 'x-omitempty': false });

export const SubTags = Type.Object({}, { $id: 'subTags', additionalProperties: true });

/**
 * The most one entity's tags may hold: 16 KiB of JSON (UTF-8), however the map is split into keys
 * and values. OpenZiti sets no bound (only its body limit); 16 KiB is far above what tags are
 * used for (labels, owners, a few ids) and keeps a non-admin's own authenticator, or any other
 * tagged entity, from holding a megabyte. `validateBody` checks every body field whose schema
 * carries `maxJsonBytes` (400 COULD_NOT_VALIDATE on the field).
 */
export const MAX_TAGS_JSON_BYTES = 16 * 1024;

export const Tags = nullable(SubTags, {
  $id: 'tags',
  description: 'A map of user defined fields and values. The values are limited to the following types/values: null, string, boolean',
  maxJsonBytes: MAX_TAGS_JSON_BYTES,
});

export const EntityRef = Type.Object(
  {
    _links: Type.Optional(Links),
    entity: Type.Optional(Type.String()),
    id: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
  },
  { $id: 'entityRef', description: 'A reference to another resource and links to interact with it' },
);

export const BaseEntity = Type.Object(
  {
    _links: Links,
    createdAt: Type.String({ format: 'date-time' }),
    id: Type.String(),
    tags: Type.Optional(Tags),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'baseEntity', description: 'Fields shared by all Edge API entities' },
);

export const Pagination = Type.Object(
  {
    limit: Type.Number({ format: 'int64' }),
    offset: Type.Number({ format: 'int64' }),
    totalCount: Type.Number({ format: 'int64' }),
  },
  { $id: 'pagination' },
);

export const Meta = Type.Object(
  {
    apiEnrollmentVersion: Type.Optional(Type.String()),
    apiVersion: Type.Optional(Type.String()),
    filterableFields: Type.Optional(Type.Array(Type.String(), { 'x-omitempty': true })),
    pagination: Type.Optional(Pagination),
  },
  { $id: 'meta' },
);

export const Empty = Type.Object({ data: Type.Object({}), meta: Meta }, { $id: 'empty' });

export const CreateLocation = Type.Object(
  { _links: Type.Optional(Links), id: Type.Optional(Type.String()) },
  { $id: 'createLocation' },
);

export const CreateEnvelope = Type.Object(
  { data: Type.Optional(CreateLocation), meta: Type.Optional(Meta) },
  { $id: 'createEnvelope' },
);

