import type { TSchema } from '@sinclair/typebox';
import { IDENTITY_AUTH_MODELS } from './identity-auth.js';
import { INFORMATIONAL_MODELS } from './informational.js';

/**
 * Named models of the public API (TypeBox schemas with `$id`), referenced by routes and emitted
 * under `definitions` in the OpenAPI documents.
 */
export const MODELS: Record<string, TSchema> = { ...INFORMATIONAL_MODELS, ...IDENTITY_AUTH_MODELS };
export { INFORMATIONAL_MODELS, IDENTITY_AUTH_MODELS };
