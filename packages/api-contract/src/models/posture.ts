import type { TSchema } from '@sinclair/typebox';

/** Models of the posture context (`$id` = the OpenZiti definition name). Shared shapes are in common.ts. */
export const POSTURE_MODELS: Record<string, TSchema> = {};
