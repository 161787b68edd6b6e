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
