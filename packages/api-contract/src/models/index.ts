import type { TSchema } from '@sinclair/typebox';
import { IDENTITY_AUTH_MODELS } from './identity-auth.js';
import { INFORMATIONAL_MODELS } from './informational.js';
import { INTEGRITY_MODELS } from './integrity.js';
import { PKI_ENROLLMENT_MODELS } from './pki-enrollment.js';
import { POLICY_MODELS } from './policy.js';
import { POSTURE_MODELS } from './posture.js';
import { SESSION_MODELS } from './session.js';

/**
 * Named models of the public API (TypeBox schemas with `$id`), referenced by routes and emitted
 * under `definitions` in the OpenAPI documents.
 */
export const MODELS: Record<string, TSchema> = {
  ...INFORMATIONAL_MODELS,
  ...IDENTITY_AUTH_MODELS,
  ...PKI_ENROLLMENT_MODELS,
  ...POLICY_MODELS,
  ...SESSION_MODELS,
  ...POSTURE_MODELS,
  ...INTEGRITY_MODELS,
};
