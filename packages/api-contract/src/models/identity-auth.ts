import type { TSchema } from '@sinclair/typebox';

/** Models of the identity-auth context (identities, API sessions, authenticate, …). */
export const IDENTITY_AUTH_MODELS: Record<string, TSchema> = {};
