import { dataEnvelope, formatTimestamp } from '@ziti/errors';
import type { Handler, HandlerContext } from '@ziti/http-kit';
import { publicHost } from '../oidc/http.js';
import type { TotpTokens } from '../oidc/totp-token.js';
import { principalOf, requestBearerTokens } from './access.js';

/**
 * OpenZiti's root issuer (`https://<edge API address>`, `AppEnv.RootIssuer`), which it puts in TOTP
 * tokens: here the public host the gateway forwards, read and checked as the OIDC provider does.
 */
export function rootIssuer(ctx: HandlerContext): string {
  return `https://${publicHost(ctx.req)}`;
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
