import { dataEnvelope } from '@ziti/errors';
import type { Handler, HandlerContext } from '@ziti/http-kit';
import type { ApiSessionManager } from '../domain/api-session-manager.js';
import type { Authenticator } from '../domain/authenticator.js';
import { goTimeString } from '../domain/session-time.js';
import { queryString } from './list.js';
import { currentApiSessionDetail } from './views.js';

interface AuthenticateBody {
  username?: string;
  password?: string;
  configTypes?: string[];
  envInfo?: Record<string, unknown>;
  sdkInfo?: Record<string, unknown>;
}

/** The caller's address: the first `x-forwarded-for` hop (set by the gateway), else the peer. */
export function clientIp(ctx: HandlerContext): string {
  const fwd = ctx.req.headers['x-forwarded-for'];
  const first = (Array.isArray(fwd) ? fwd[0] : fwd)?.split(',')[0]?.trim();
  const ip = first || ctx.req.socket.remoteAddress || '';
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip; // IPv4-mapped IPv6 → IPv4
}

export function authenticateHandlers(auth: Authenticator, sessions: ApiSessionManager): Record<string, Handler> {
  return {
    async authenticate(ctx) {
      const body = (ctx.body ?? {}) as AuthenticateBody;
      const session = await auth.authenticate({ method: queryString(ctx, 'method'), ...body, ipAddress: clientIp(ctx) });
      const expiry = sessions.expiry(session);
      return {
        body: dataEnvelope(currentApiSessionDetail(session, expiry)),
        headers: {
          'zt-session': session.token,
          'expiration-seconds': String(expiry.expirationSeconds),
          'expires-at': goTimeString(expiry.expiresAt),
        },
      };
    },
  };
}
