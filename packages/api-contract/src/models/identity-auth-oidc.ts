import { Type } from '@sinclair/typebox';
import { BaseEntity, Tags, envelope } from './common.js';

/**
 * Models of OIDC's management and session surface (OIDC.md): revocations and the TOTP token,
 * transcribed from the OpenZiti swagger definitions of the same name.
 */

export const RevocationTypeEnum = Type.String({ $id: 'revocationTypeEnum', enum: ['JTI', 'IDENTITY', 'API_SESSION'] });

/** `type` is required by the spec, but OpenZiti's handler defaults it to JTI, and so does this one. */
export const RevocationCreate = Type.Object(
  { id: Type.String(), tags: Type.Optional(Tags), type: Type.Optional(RevocationTypeEnum) },
  { $id: 'revocationCreate', description: 'A Revocation creation request', additionalProperties: false },
);

export const RevocationDetail = Type.Intersect(
  [BaseEntity, Type.Object({ expiresAt: Type.String({ format: 'date-time' }), type: RevocationTypeEnum })],
  { $id: 'revocationDetail', description: 'A Revocation resource' },
);
export const RevocationList = Type.Array(RevocationDetail, { $id: 'revocationList', description: 'An array of Revocation resources' });
export const ListRevocationsEnvelope = envelope('listRevocationsEnvelope', RevocationList);
export const DetailRevocationEnvelope = envelope('detailRevocationEnvelope', RevocationDetail);

export const TotpToken = Type.Object(
  { issuedAt: Type.String({ format: 'date-time' }), token: Type.String() },
  { $id: 'totpToken' },
);
export const TotpTokenEnvelope = envelope('totpTokenEnvelope', TotpToken);
