import type { Identity } from './model.js';
import { isDisabled } from './model.js';
import type { IdentityProjection } from './ports.js';

/** The projection of an identity other contexts keep (`disabled` as of now). */
export function projectionOf(i: Identity, now = new Date()): IdentityProjection {
  return {
    id: i.id,
    name: i.name,
    roleAttributes: i.roleAttributes,
    isAdmin: i.isAdmin,
    disabled: isDisabled(i, now),
    updatedAt: i.updatedAt,
    typeId: i.typeId,
    isDefaultAdmin: i.isDefaultAdmin,
    externalId: i.externalId,
    authPolicyId: i.authPolicyId,
    createdAt: i.createdAt,
    tags: i.tags,
    defaultHostingPrecedence: i.defaultHostingPrecedence,
    defaultHostingCost: i.defaultHostingCost,
    serviceHostingPrecedences: i.serviceHostingPrecedences,
    serviceHostingCosts: i.serviceHostingCosts,
    appData: i.appData,
  };
}
