import type { IncomingMessage } from 'node:http';
import { ApiError } from '@ziti/errors';
import type { HandlerContext, RequestPrincipal } from '@ziti/http-kit';
import { bearerTokens } from '../domain/ext-jwt/jwt-verifier.js';
import type { Actor } from '../domain/identity-rules.js';

export type Action = 'read' | 'create' | 'update' | 'delete';

export function principalOf(ctx: HandlerContext): RequestPrincipal {
  if (!ctx.principal) throw ApiError.of('UNAUTHORIZED');
  return ctx.principal;
}

export const actorOf = (ctx: HandlerContext): Actor => ({ isAdmin: !!(ctx.principal?.isAdmin || ctx.principal?.isDefaultAdmin) });

/**
 * `DefaultManagementAccess` with an explicit action, for routes whose action is not their verb's
 * (disable, enable and MFA removal are `identity.update`): admin, `admin_readonly` for reads,
 * `<entity>` or `<entity>.<action>`; else 401.
 */
export function requireEntityAccess(ctx: HandlerContext, entity: string, action: Action): void {
  const p = principalOf(ctx);
  if (ctx.api !== 'management' || !p.isFullyAuthenticated) throw ApiError.of('UNAUTHORIZED');
  if (p.isAdmin || p.isDefaultAdmin) return;
  if (action === 'read' && p.permissions.includes('admin_readonly')) return;
  if (p.permissions.includes(entity) || p.permissions.includes(`${entity}.${action}`)) return;
  throw ApiError.of('UNAUTHORIZED');
}

/** The `Authorization: Bearer` tokens of the request (every header line, at most 3). */
export function requestBearerTokens(ctx: HandlerContext): string[] {
  return bearerTokensOf(ctx.req);
}

/** The `Authorization: Bearer` tokens of a request (every line, at most 3). */
export function bearerTokensOf(req: IncomingMessage): string[] {
  // No line at all (`headers` keeps the first of several): skip building the per-line view.
  if (req.headers.authorization === undefined) return [];
  const lines = req.headersDistinct?.authorization;
  return bearerTokens(lines ?? (typeof req.headers.authorization === 'string' ? [req.headers.authorization] : []));
}

/** An MFA code from the body (`{code}`) or the `mfa-validation-code` header. */
export function mfaCodeOf(ctx: HandlerContext): string {
  const body = ctx.body;
  if (body && typeof body === 'object' && typeof (body as { code?: unknown }).code === 'string') return (body as { code: string }).code;
  const header = ctx.req.headers['mfa-validation-code'];
  return typeof header === 'string' ? header.trim() : '';
}
