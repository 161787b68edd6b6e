import type { TSchema } from '@sinclair/typebox';

/** Models of the session context (`$id` = the OpenZiti definition name). Shared shapes are in common.ts. */
export const SESSION_MODELS: Record<string, TSchema> = {};
