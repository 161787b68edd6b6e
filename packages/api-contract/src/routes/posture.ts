import type { RouteDef } from '../route.js';

/** Operations served by the posture context. */
export const POSTURE_ROUTES: readonly RouteDef[] = [];
