import type { RouteDef } from '../route.js';

/** Operations served by the session context. */
export const SESSION_ROUTES: readonly RouteDef[] = [];
