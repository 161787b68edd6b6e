import { ApiError, dataEnvelope, formatTimestamp } from '@ziti/errors';
import type { Handler, HandlerContext } from '@ziti/http-kit';
import type { TotpTokens } from '../oidc/totp-token.js';
import { principalOf, requestBearerTokens } from './access.js';

/** `host[:port]`: a DNS name, an IPv4 literal or a bracketed IPv6 literal. */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*)(?::\d{1,5})?$/;

/**
 * OpenZiti's root issuer (`https://<edge API address>`, `AppEnv.RootIssuer`), which it puts in TOTP
 * tokens: here the public host the gateway forwards (`x-forwarded-host`, else `Host`).
 */
export function rootIssuer(ctx: HandlerContext): string {
  const forwarded = ctx.req.headers['x-forwarded-host'];
  const host = (typeof forwarded === 'string' && forwarded) || ctx.req.headers.host || '';
  if (!HOST.test(host)) throw ApiError.field('Host', 'must be host[:port]', host);
  return `https://${host}`;
}

/** `POST /current-api-session/totp-token` (both APIs; OIDC sessions only). */
export function totpTokenHandlers(tokens: TotpTokens): Record<string, Handler> {
  return {
    async createTotpToken(ctx) {
      const p = principalOf(ctx);
      const code = (ctx.body as { code?: unknown } | undefined)?.code;
      const issued = await tokens.issue(p, typeof code === 'string' ? code : '', () => rootIssuer(ctx), requestBearerTokens(ctx));
      return { body: dataEnvelope({ issuedAt: formatTimestamp(issued.issuedAt), token: issued.token }) };
    },
  };
}
