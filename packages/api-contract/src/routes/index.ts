import type { ApiName, Owner, RouteDef } from '../route.js';
import { FABRIC_ROUTES } from './fabric.js';
import { GATEWAY_ROUTES } from './gateway.js';
import { IDENTITY_AUTH_ROUTES } from './identity-auth.js';
import { INTEGRITY_ROUTES } from './integrity.js';
import { PKI_ENROLLMENT_ROUTES } from './pki-enrollment.js';
import { POLICY_ROUTES } from './policy.js';
import { POSTURE_ROUTES } from './posture.js';
import { SESSION_ROUTES } from './session.js';

/** Every public operation this controller serves, across the Edge APIs and the fabric API. */
export const ALL_ROUTES: readonly RouteDef[] = [
  ...GATEWAY_ROUTES,
  ...INTEGRITY_ROUTES,
  ...IDENTITY_AUTH_ROUTES,
  ...PKI_ENROLLMENT_ROUTES,
  ...POLICY_ROUTES,
  ...SESSION_ROUTES,
  ...POSTURE_ROUTES,
  ...FABRIC_ROUTES,
];

export function routesFor(filter: { owner?: Owner; api?: ApiName }): RouteDef[] {
  return ALL_ROUTES.filter(
    (r) => (!filter.owner || r.owner === filter.owner) && (!filter.api || r.apis.includes(filter.api)),
  );
}

export function routeByOperationId(api: ApiName, operationId: string): RouteDef | undefined {
  return ALL_ROUTES.find((r) => r.operationId === operationId && r.apis.includes(api));
}
