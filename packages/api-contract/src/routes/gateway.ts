import type { RouteDef } from '../route.js';

/** Informational operations served by the gateway itself. */
export const GATEWAY_ROUTES: readonly RouteDef[] = [];
