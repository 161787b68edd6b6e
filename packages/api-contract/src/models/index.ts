import type { TSchema } from '@sinclair/typebox';

/**
 * Named models of the public API (TypeBox schemas with `$id`), referenced by routes and emitted
 * under `definitions` in the OpenAPI documents.
 */
export const MODELS: Record<string, TSchema> = {};
