import type { RouteDef } from '../route.js';

/** Operations served by the identity-auth context. */
export const IDENTITY_AUTH_ROUTES: readonly RouteDef[] = [];
