import type { TSchema } from '@sinclair/typebox';

/** Models of the pki-enrollment context (`$id` = the OpenZiti definition name). Shared shapes are in common.ts. */
export const PKI_ENROLLMENT_MODELS: Record<string, TSchema> = {};
