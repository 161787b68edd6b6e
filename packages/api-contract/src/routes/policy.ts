import type { RouteDef } from '../route.js';

/** Operations served by the policy context. */
export const POLICY_ROUTES: readonly RouteDef[] = [];
