import type { RouteDef } from '../route.js';

/** Operations served by the pki-enrollment context. */
export const PKI_ENROLLMENT_ROUTES: readonly RouteDef[] = [];
