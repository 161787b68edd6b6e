import type { Access, HttpMethod } from '@ziti/api-contract';
import { ApiError } from '@ziti/errors';
import type { RequestPrincipal } from './principal.js';

const ACTION: Record<HttpMethod, string> = { GET: 'read', POST: 'create', PUT: 'update', PATCH: 'update', DELETE: 'delete' };

/**
 * Authorization of a route for a principal, as the controller's permission groups decide it.
 * Every refusal is 401 UNAUTHORIZED: the Edge API has no 403.
 */
export function checkAccess(access: Access, method: HttpMethod, principal: RequestPrincipal | undefined, permission?: string): void {
  if (access === 'anonymous') return;
  if (!principal) throw ApiError.of('UNAUTHORIZED');
  if (access === 'partial') return;
  if (!principal.isFullyAuthenticated) throw ApiError.of('UNAUTHORIZED');
  if (access === 'authenticated') return;
  const admin = principal.isAdmin || principal.isDefaultAdmin;
  if (admin) return;
  if (access === 'admin') throw ApiError.of('UNAUTHORIZED');
  const perms = principal.permissions;
  if (method === 'GET' && perms.includes('admin_readonly')) return;
  if (permission && (perms.includes(permission) || perms.includes(`${permission}.${ACTION[method]}`))) return;
  throw ApiError.of('UNAUTHORIZED');
}

/** Who performs a request, as the escalation rules below need it (a principal is one). */
export type Caller = Pick<RequestPrincipal, 'isAdmin' | 'isDefaultAdmin' | 'permissions'>;

/** What the escalation rules need to know of an identity a request targets. */
export interface IdentityPrivilege {
  isAdmin: boolean;
  isDefaultAdmin?: boolean;
  permissions: readonly string[];
}

/** An admin: `isAdmin` or the default admin. */
export const isAdminCaller = (caller: Caller | undefined): boolean => !!caller && (caller.isAdmin || caller.isDefaultAdmin);

/**
 * A privileged identity: an admin (the default admin included) or a holder of any management
 * permission. Only admins may touch one: no scoped permission may create, refresh, read the secret
 * of, or replace a credential of it, nor log in as it through a signer or CA a non-admin controls.
 */
export const isPrivilegedIdentity = (target: IdentityPrivilege): boolean =>
  target.isAdmin || target.isDefaultAdmin === true || target.permissions.length > 0;

/** Whether `caller` may act on an identity's credentials (`null`: an identity whose privilege is not known). */
export const mayTouchIdentity = (caller: Caller | undefined, target: IdentityPrivilege | null): boolean =>
  isAdminCaller(caller) || (target !== null && !isPrivilegedIdentity(target));

/** `enrollment` and `identity` in every action form: the scoped grants over identities' credentials. */
const CREDENTIAL_PERMISSION = /^(enrollment|identity)(\.(read|create|update|delete))?$/;

/**
 * Whether `caller` may see the secrets (`token`, `jwt`) of an enrollment of `target`: an admin
 * always; a holder of an `enrollment` or `identity` permission (any action) when the target is not
 * privileged (a router's enrollment: pass a non-privileged target); `admin_readonly` never (reading
 * is not using). `null`: an identity whose privilege is not known, whose secrets stay hidden.
 */
export function mayUseEnrollmentSecrets(caller: Caller | undefined, target: IdentityPrivilege | null): boolean {
  if (isAdminCaller(caller)) return true;
  if (!caller || !caller.permissions.some((p) => CREDENTIAL_PERMISSION.test(p))) return false;
  return target !== null && !isPrivilegedIdentity(target);
}
