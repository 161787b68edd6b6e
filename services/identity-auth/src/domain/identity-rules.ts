import { ApiError } from '@ziti/errors';
import { normalizeName } from '@ziti/http-kit';
import type { Identity, IdentityFields, JsonMap } from './model.js';

/** Identity input as create, update (PUT) and patch receive it; absent keys are `undefined`. */
export interface IdentityInput {
  name?: string | null;
  type?: string;
  isAdmin?: boolean | null;
  roleAttributes?: string[] | null;
  tags?: JsonMap | null;
  appData?: JsonMap | null;
  authPolicyId?: string | null;
  externalId?: string | null;
  defaultHostingPrecedence?: string;
  defaultHostingCost?: number;
  serviceHostingPrecedences?: Record<string, string>;
  serviceHostingCosts?: Record<string, number>;
  permissions?: string[] | null;
  /** Immutable: ignored, but a non-admin naming it is refused (as the controller does). */
  isDefaultAdmin?: boolean;
}

/** Who performs a write: admins may grant admin flags and permissions, others may not (§6.12). */
export interface Actor {
  isAdmin: boolean;
}

export const DEFAULT_AUTH_POLICY_ID = 'default';
export const IDENTITY_TYPE_NAMES = ['User', 'Device', 'Service', 'Router', 'Default'] as const;
export const TERMINATOR_PRECEDENCES = ['default', 'required', 'failed'] as const;
const MAX_COST = 65535;

/** Permission names of the controller (§6.12). */
export const PERMISSIONS: ReadonlySet<string> = new Set([
  'admin_readonly',
  'ops',
  'ops.read',
  'ops.update',
  'ops.delete',
  ...[
    'auth-policy', 'ca', 'config', 'config-type', 'edge-router-policy', 'enrollment', 'external-jwt-signer', 'identity',
    'posture-check', 'router', 'service', 'service-edge-router-policy', 'service-policy', 'terminator',
  ].flatMap((e) => [e, `${e}.read`, `${e}.create`, `${e}.update`, `${e}.delete`]),
]);

const oneOf = (field: string, values: readonly string[]) => `${field} in body should be one of [${values.join(' ')}]`;

/** The API type name → the stored identity type id: User, Device and Service are Default (§6.10). */
export function identityTypeId(type: string): string {
  switch (type) {
    case 'User':
    case 'Device':
    case 'Service':
    case 'Default':
      return 'Default';
    case 'Router':
      return 'Router';
    default:
      throw ApiError.field('type', oneOf('type', IDENTITY_TYPE_NAMES), type);
  }
}

/** Entity role attributes are plain strings; `#` and `@` are selector prefixes (§5.1). */
export function validateRoleAttributes(attrs: readonly string[]): string[] {
  for (const a of attrs) {
    if (a.startsWith('#') || a.startsWith('@')) {
      throw ApiError.field('roleAttributes', `role attributes may not be prefixed with ${a[0]}`, a);
    }
  }
  return [...attrs];
}

export function validatePermissions(perms: readonly string[]): string[] {
  perms.forEach((p, i) => {
    if (!PERMISSIONS.has(p)) throw ApiError.field('permissions', oneOf(`permissions.${i}`, [...PERMISSIONS]), p);
  });
  return [...new Set(perms)];
}

function validatePrecedence(value: string, field: string, reasonField = field): string {
  if (!(TERMINATOR_PRECEDENCES as readonly string[]).includes(value)) {
    throw ApiError.field(field, oneOf(reasonField, TERMINATOR_PRECEDENCES), value);
  }
  return value;
}

function validateCost(value: number, field: string, reasonField = field): number {
  if (!Number.isInteger(value) || value < 0 || value > MAX_COST) {
    throw ApiError.field(field, `${reasonField} in body should be between 0 and ${MAX_COST}`, value);
  }
  return value;
}

/** The name in its stored form (`normalizeName`); empty or only white space → 400 as a missing name. */
function validateName(name: string | null | undefined): string {
  const normalized = typeof name === 'string' ? normalizeName(name) : '';
  if (normalized === '') throw ApiError.field('name', 'name in body is required', name ?? '');
  return normalized;
}

function precedenceMap(m: Record<string, string>): Record<string, string> {
  for (const [k, v] of Object.entries(m)) validatePrecedence(v, 'serviceHostingPrecedences', `serviceHostingPrecedences.${k}`);
  return { ...m };
}

function costMap(m: Record<string, number>): Record<string, number> {
  for (const [k, v] of Object.entries(m)) validateCost(v, 'serviceHostingCosts', `serviceHostingCosts.${k}`);
  return { ...m };
}

const map = (m: JsonMap | null | undefined): JsonMap => (m && typeof m === 'object' ? { ...m } : {});
const externalId = (v: string | null | undefined): string | null => (v === undefined || v === null || v === '' ? null : v);

/**
 * Every writable field from `input`, absent ones defaulted: the semantics of create and of PUT
 * (which replaces every updatable field, clearing the omitted ones).
 */
export function fullFields(input: IdentityInput): IdentityFields {
  if (input.type === undefined) throw ApiError.field('type', 'type in body is required');
  return {
    name: validateName(input.name),
    typeId: identityTypeId(input.type),
    isAdmin: input.isAdmin ?? false,
    roleAttributes: validateRoleAttributes(input.roleAttributes ?? []),
    tags: map(input.tags),
    appData: map(input.appData),
    authPolicyId: input.authPolicyId || DEFAULT_AUTH_POLICY_ID,
    externalId: externalId(input.externalId),
    defaultHostingPrecedence: validatePrecedence(input.defaultHostingPrecedence ?? 'default', 'defaultHostingPrecedence'),
    defaultHostingCost: validateCost(input.defaultHostingCost ?? 0, 'defaultHostingCost'),
    serviceHostingPrecedences: precedenceMap(input.serviceHostingPrecedences ?? {}),
    serviceHostingCosts: costMap(input.serviceHostingCosts ?? {}),
    permissions: validatePermissions(input.permissions ?? []),
  };
}

/** PATCH: only the fields present in `input` change; the rest keep their current values. */
export function patchedFields(current: IdentityFields, input: IdentityInput): IdentityFields {
  const has = (k: keyof IdentityInput) => Object.prototype.hasOwnProperty.call(input, k) && input[k] !== undefined;
  return {
    name: has('name') ? validateName(input.name) : current.name,
    typeId: has('type') ? identityTypeId(input.type!) : current.typeId,
    isAdmin: has('isAdmin') ? input.isAdmin === true : current.isAdmin,
    roleAttributes: has('roleAttributes') ? validateRoleAttributes(input.roleAttributes ?? []) : current.roleAttributes,
    tags: has('tags') ? map(input.tags) : current.tags,
    appData: has('appData') ? map(input.appData) : current.appData,
    authPolicyId: has('authPolicyId') ? input.authPolicyId || DEFAULT_AUTH_POLICY_ID : current.authPolicyId,
    externalId: has('externalId') ? externalId(input.externalId) : current.externalId,
    defaultHostingPrecedence: has('defaultHostingPrecedence')
      ? validatePrecedence(input.defaultHostingPrecedence!, 'defaultHostingPrecedence')
      : current.defaultHostingPrecedence,
    defaultHostingCost: has('defaultHostingCost') ? validateCost(input.defaultHostingCost!, 'defaultHostingCost') : current.defaultHostingCost,
    serviceHostingPrecedences: has('serviceHostingPrecedences')
      ? precedenceMap(input.serviceHostingPrecedences!)
      : current.serviceHostingPrecedences,
    serviceHostingCosts: has('serviceHostingCosts') ? costMap(input.serviceHostingCosts!) : current.serviceHostingCosts,
    permissions: has('permissions') ? validatePermissions(input.permissions ?? []) : current.permissions,
  };
}

/**
 * The admin protection of §6.12 (the controller's identity router): a non-admin may not create or
 * edit admins or identities holding permissions, may not grant admin flags or permissions, and may
 * not touch those fields at all.
 */
export function assertMayWrite(actor: Actor, next: IdentityFields | null, current: Identity | null): void {
  if (actor.isAdmin) return;
  if (current && !mayAffect(actor, current)) throw ApiError.of('UNAUTHORIZED');
  if (next && (next.isAdmin || next.permissions.length > 0)) throw ApiError.of('UNAUTHORIZED');
}

/** Whether the actor may change, disable or delete this identity. */
export function mayAffect(actor: Actor, target: Pick<Identity, 'isAdmin' | 'isDefaultAdmin' | 'permissions'>): boolean {
  return actor.isAdmin || !(target.isAdmin || target.isDefaultAdmin || target.permissions.length > 0);
}

/** PUT replaces admin fields wholesale: non-admins must use PATCH (the controller refuses them PUT). */
export function assertMayPut(actor: Actor): void {
  if (!actor.isAdmin) throw ApiError.of('UNAUTHORIZED', { cause: { code: 'UNAUTHORIZED', message: 'non-admins may not use the PUT method, use PATCH instead' } });
}

/** A non-admin PATCH may not name `permissions`, `isAdmin` or `isDefaultAdmin`. */
export function assertMayPatch(actor: Actor, input: IdentityInput): void {
  if (actor.isAdmin) return;
  for (const field of ['permissions', 'isAdmin', 'isDefaultAdmin'] as const) {
    if (Object.prototype.hasOwnProperty.call(input, field) && input[field] !== undefined) {
      throw ApiError.of('UNAUTHORIZED', { cause: { code: 'UNAUTHORIZED', message: `non-admins may not modify the identity field '${field}'` } });
    }
  }
}
