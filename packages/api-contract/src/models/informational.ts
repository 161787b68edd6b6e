import type { TSchema } from '@sinclair/typebox';

/** Models of the informational operations (version, specs, protocols, capabilities). */
export const INFORMATIONAL_MODELS: Record<string, TSchema> = {};
