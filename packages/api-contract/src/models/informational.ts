import { type TSchema, Type } from '@sinclair/typebox';
import { BaseEntity, Meta, nullable } from './common.js';

/**
 * Models of the informational operations (version, capabilities, protocols, specs) and of the
 * error envelope, transcribed from the OpenZiti swagger definitions of the same name
 * (`$id` = definition name). Same conventions as `identity-auth.ts`.
 */

const envelope = (id: string, data: TSchema) => Type.Object({ data, meta: Meta }, { $id: id });

// ---------------------------------------------------------------- version

export const ApiVersion = Type.Object(
  {
    apiBaseUrls: Type.Optional(Type.Array(Type.String())),
    path: Type.String(),
    version: Type.Optional(Type.String()),
  },
  { $id: 'apiVersion' },
);

export const Version = Type.Object(
  {
    apiVersions: Type.Optional(Type.Object({}, { additionalProperties: Type.Object({}, { additionalProperties: ApiVersion }) })),
    buildDate: Type.Optional(Type.String({ example: '2020-02-11 16:09:08' })),
    capabilities: Type.Optional(Type.Array(Type.String())),
    revision: Type.Optional(Type.String({ example: 'ea556fc18740' })),
    runtimeVersion: Type.Optional(Type.String({ example: 'v20.19.0' })),
    version: Type.Optional(Type.String({ example: 'v0.9.0' })),
  },
  { $id: 'version' },
);

export const ListVersionEnvelope = envelope('listVersionEnvelope', Version);

// ---------------------------------------------------------------- capabilities

/** Every capability the controller knows of (`OIDC_AUTH_WITH_CSR` is newer than the mirrored spec). */
export const CAPABILITY_NAMES = ['OIDC_AUTH', 'HA_CONTROLLER', 'OIDC_AUTH_WITH_CSR'] as const;

export const Capabilities = Type.String({ $id: 'capabilities', enum: [...CAPABILITY_NAMES] });

export const ListEnumeratedCapabilitiesEnvelope = envelope('listEnumeratedCapabilitiesEnvelope', Type.Array(Capabilities));

// ---------------------------------------------------------------- protocols

export const Protocol = Type.Object({ address: Type.String() }, { $id: 'protocol' });

export const ListProtocols = Type.Object({}, { $id: 'listProtocols', additionalProperties: Protocol });

export const ListProtocolsEnvelope = envelope('listProtocolsEnvelope', ListProtocols);

// ---------------------------------------------------------------- specs

export const SpecDetail = Type.Intersect([BaseEntity, Type.Object({ name: Type.String() })], { $id: 'specDetail' });

export const SpecList = Type.Array(SpecDetail, { $id: 'specList' });

/**
 * The body of a spec: the generated swagger 2.0 document, serialised as JSON text (the spec types
 * it as a string). With `Accept: text/yaml` the bare YAML document is served instead.
 */
export const SpecBodyDetail = Type.String({ $id: 'specBodyDetail' });

export const ListSpecsEnvelope = envelope('listSpecsEnvelope', SpecList);
export const DetailSpecEnvelope = envelope('detailSpecEnvelope', SpecDetail);
export const DetailSpecBodyEnvelope = envelope('detailSpecBodyEnvelope', SpecBodyDetail);
/** What `/specs/{id}/spec` really answers: the OpenAPI (swagger 2.0) document, bare, as the controller produces it. */
export const SpecDocument = Type.Object({ swagger: Type.String() }, { $id: 'specDocument', additionalProperties: true });

// ---------------------------------------------------------------- controllers

export const ApiAddress = Type.Object({ url: Type.Optional(Type.String()), version: Type.Optional(Type.String()) }, { $id: 'apiAddress' });
export const ApiAddressArray = Type.Array(ApiAddress, { $id: 'apiAddressArray' });
export const ApiAddressList = Type.Object({}, { $id: 'apiAddressList', additionalProperties: ApiAddressArray });

export const ControllerDetail = Type.Intersect(
  [
    BaseEntity,
    Type.Object({
      apiAddresses: Type.Optional(ApiAddressList),
      certPem: Type.String(),
      ctrlAddress: Type.Optional(nullable(Type.String())),
      fingerprint: Type.String(),
      isOnline: Type.Boolean(),
      isPreferredLeader: Type.Optional(Type.Boolean()),
      lastJoinedAt: Type.String({ format: 'date-time' }),
      name: Type.String(),
    }),
  ],
  { $id: 'controllerDetail', description: 'A controller resource' },
);
export const ControllersList = Type.Array(ControllerDetail, { $id: 'controllersList', description: 'An array of controller resources' });
export const ListControllersEnvelope = envelope('listControllersEnvelope', ControllersList);

// ---------------------------------------------------------------- errors

/** `allOf(apiFieldError, apiError)` in the spec, flattened; `cause` nests recursively. */
export const ApiErrorCause = Type.Object(
  {
    cause: Type.Optional(Type.Object({}, { additionalProperties: true })),
    code: Type.Optional(Type.String()),
    data: Type.Optional(Type.Object({}, { additionalProperties: true })),
    field: Type.Optional(Type.String()),
    message: Type.Optional(Type.String()),
    reason: Type.Optional(Type.String()),
    value: Type.Optional(Type.String()),
  },
  { $id: 'apiErrorCause' },
);

export const ApiErrorModel = Type.Object(
  {
    cause: Type.Optional(ApiErrorCause),
    code: Type.Optional(Type.String()),
    data: Type.Optional(Type.Object({}, { additionalProperties: true })),
    message: Type.Optional(Type.String()),
    requestId: Type.Optional(Type.String()),
  },
  { $id: 'apiError' },
);

/** The error envelope of every failure: `{error:{code,message,requestId[,cause]}, meta}`. */
export const ApiErrorEnvelope = Type.Object({ error: ApiErrorModel, meta: Meta }, { $id: 'apiErrorEnvelope' });

/** Models of the informational operations and the error envelope. */
// ---------------------------------------------------------------- summary

/** `GET /summary`: entity type (OpenZiti's store name, e.g. `identities`, `routers.edge`) → count. */
export const ListSummaryCounts = Type.Object({}, { additionalProperties: Type.Integer(), $id: 'listSummaryCounts' });

export const ListSummaryCountsEnvelope = envelope('listSummaryCountsEnvelope', ListSummaryCounts);

export const INFORMATIONAL_MODELS: Record<string, TSchema> = Object.fromEntries(
  [
    ApiVersion, Version, ListVersionEnvelope, Capabilities, ListEnumeratedCapabilitiesEnvelope, Protocol, ListProtocols,
    ListProtocolsEnvelope, SpecDetail, SpecList, SpecBodyDetail, ListSpecsEnvelope, DetailSpecEnvelope,
    DetailSpecBodyEnvelope, SpecDocument, ApiErrorCause, ApiErrorModel, ApiErrorEnvelope,
    ApiAddress, ApiAddressArray, ApiAddressList, ControllerDetail, ControllersList, ListControllersEnvelope,
    ListSummaryCounts, ListSummaryCountsEnvelope,
  ].map((s) => [s.$id as string, s]),
);
