import type { TSchema } from '@sinclair/typebox';

/** Models of the policy context (`$id` = the OpenZiti definition name). Shared shapes are in common.ts. */
export const POLICY_MODELS: Record<string, TSchema> = {};
