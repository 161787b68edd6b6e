import type { IncomingMessage } from 'node:http';
import { dataEnvelope, emptyEnvelope } from '@ziti/errors';
import { AUTH_OUTCOME_HEADER, type AuthOutcome, type Handler, type HandlerContext, clientCertChainOf, encodeResponseEvent } from '@ziti/http-kit';
import type { ApiSessionManager } from '../domain/api-session-manager.js';
import type { Authenticator } from '../domain/authenticator.js';
import type { MfaManager } from '../domain/mfa/mfa-manager.js';
import { goTimeString } from '../domain/session-time.js';
import { principalOf, requestBearerTokens } from './access.js';
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
  return clientIpOf(ctx.req);
}

/** `clientIp` of a request outside the route table (the OIDC provider). */
export function clientIpOf(req: IncomingMessage): string {
  const fwd = req.headers['x-forwarded-for'];
  const first = (Array.isArray(fwd) ? fwd[0] : fwd)?.split(',')[0]?.trim();
  const ip = first || req.socket.remoteAddress || '';
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip; // IPv4-mapped IPv6 → IPv4
}

/** Set once per flag (extend, key roll) of a certificate session: the header can appear twice (§9.9). */
export const EXTEND_REQUESTED_HEADER = 'ziti-authenticator-extend-requested';

/**
 * `outcomes`: each login's outcome goes back to the gateway on its response (internal header,
 * never passed to the caller), for the event stream's `authentication` records.
 */
export function authenticateHandlers(
  auth: Authenticator,
  sessions: ApiSessionManager,
  mfa: MfaManager,
  internalSecret: string,
  outcomes = false,
): Record<string, Handler> {
  return {
    async authenticate(ctx) {
      const body = (ctx.body ?? {}) as AuthenticateBody;
      const method = queryString(ctx, 'method');
      const tell = outcomes ? (o: AuthOutcome) => ctx.res.setHeader(AUTH_OUTCOME_HEADER, encodeResponseEvent(o)) : undefined;
      const { session, state, challenge, identity, secondary } = await auth.authenticate(
        {
          method,
          ...body,
          ipAddress: clientIp(ctx),
          bearerTokens: requestBearerTokens(ctx),
          ...(method === 'cert' ? { clientCertChain: clientCertChainOf(ctx.req, internalSecret) } : {}),
        },
        tell,
      );
      await sessions.remember(session, identity, state, secondary);
      const flags = [session.isCertExtendRequested, session.isCertKeyRollRequested].filter(Boolean).map(() => 'true');
      if (flags.length > 0) ctx.res.setHeader(EXTEND_REQUESTED_HEADER, flags);
      const expiry = sessions.expiry(session);
      return {
        body: dataEnvelope(currentApiSessionDetail(session, expiry, state)),
        headers: {
          'zt-session': session.token,
          'expiration-seconds': String(expiry.expirationSeconds),
          'expires-at': goTimeString(expiry.expiresAt),
          ...(challenge ? { 'WWW-Authenticate': challenge } : {}),
        },
      };
    },
    async authenticateMfa(ctx) {
      const p = principalOf(ctx);
      await mfa.authenticate(p.identityId, p.apiSessionId, (ctx.body as { code: string }).code);
      return { body: emptyEnvelope() };
    },
  };
}
