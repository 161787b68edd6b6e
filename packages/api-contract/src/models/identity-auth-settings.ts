import { Type } from '@sinclair/typebox';
import { BaseEntity, Tags, envelope } from './common.js';

/**
 * Models of controller settings and identity tracing, transcribed from the OpenZiti swagger
 * definitions of the same name (`$id` = definition name). Part of IDENTITY_AUTH_MODELS
 * (identity-auth.ts).
 */

/** At most this many URIs per list, each at most this long (the swagger gives no limit). */
export const MAX_SETTING_URIS = 100;
export const MAX_SETTING_URI_LENGTH = 2048;

const uriList = Type.Array(Type.String({ maxLength: MAX_SETTING_URI_LENGTH }), { maxItems: MAX_SETTING_URIS });

/** `oidc` of `controllerSettings` (no definition of its own in the spec). */
const Oidc = Type.Object(
  { postLogoutUris: Type.Optional(uriList), redirectUris: Type.Optional(uriList) },
  { additionalProperties: false },
);

export const ControllerSettings = Type.Object({ oidc: Type.Optional(Oidc) }, { $id: 'controllerSettings', additionalProperties: false });

export const ControllerSettingCreate = Type.Object(
  { oidc: Type.Optional(Oidc), controllerId: Type.String({ maxLength: 255 }), tags: Type.Optional(Tags) },
  { $id: 'controllerSettingCreate', additionalProperties: false },
);
export const ControllerSettingUpdate = Type.Object(
  { oidc: Type.Optional(Oidc), tags: Type.Optional(Tags) },
  { $id: 'controllerSettingUpdate', additionalProperties: false },
);
export const ControllerSettingPatch = Type.Object(
  { oidc: Type.Optional(Oidc), tags: Type.Optional(Tags) },
  { $id: 'controllerSettingPatch', additionalProperties: false },
);

export const ControllerSettingDetail = Type.Intersect([BaseEntity, ControllerSettings], { $id: 'controllerSettingDetail' });
export const ControllerSettingsList = Type.Array(ControllerSettingDetail, { $id: 'controllerSettingsList' });
export const ControllerSettingEffective = Type.Intersect(
  [BaseEntity, Type.Object({ effective: Type.Optional(ControllerSettings), instance: Type.Optional(ControllerSettings) })],
  { $id: 'controllerSettingEffective' },
);

export const ListControllerSettingEnvelope = envelope('listControllerSettingEnvelope', ControllerSettingsList);
export const DetailControllerSettingEnvelope = envelope('detailControllerSettingEnvelope', ControllerSettingDetail);
export const DetailControllerSettingEffectiveEnvelope = envelope('detailControllerSettingEffectiveEnvelope', ControllerSettingEffective);

// ---------------------------------------------------------------- identity tracing

/** Body of `PUT /identities/{id}/trace`. */
export const TraceSpec = Type.Object(
  {
    channels: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100 })),
    duration: Type.Optional(Type.String({ maxLength: 100 })),
    enabled: Type.Optional(Type.Boolean()),
    traceId: Type.Optional(Type.String({ maxLength: 255 })),
  },
  { $id: 'traceSpec', additionalProperties: false },
);
export const TraceDetail = Type.Object(
  { enabled: Type.Optional(Type.Boolean()), traceId: Type.Optional(Type.String()), until: Type.Optional(Type.String({ format: 'date-time' })) },
  { $id: 'traceDetail' },
);
export const TraceDetailEnvelope = envelope('traceDetailEnvelope', TraceDetail);
