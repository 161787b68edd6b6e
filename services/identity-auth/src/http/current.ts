import { ApiError, dataEnvelope, emptyEnvelope } from '@ziti/errors';
import type { Handler } from '@ziti/http-kit';
import type { ApiSessionManager } from '../domain/api-session-manager.js';
import type { IdentityManager } from '../domain/identity-manager.js';
import { principalOf, requestBearerTokens } from './access.js';
import { currentApiSessionDetail, currentIdentityDetail } from './views.js';

/** `/current-api-session` and `/current-identity` (both APIs). */
export function currentHandlers(sessions: ApiSessionManager, identities: IdentityManager): Record<string, Handler> {
  return {
    async getCurrentAPISession(ctx) {
      const principal = principalOf(ctx);
      const { view, state } = await sessions.current(principal.apiSessionId, requestBearerTokens(ctx));
      if (view.kind === 'oidc') {
        // A bearer session expires with the access token the request carried (the principal's expiry).
        const expiresAt = new Date(principal.expiresAt);
        const expirationSeconds = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
        return { body: dataEnvelope(currentApiSessionDetail(view, { expiresAt, expirationSeconds }, state)) };
      }
      // The gateway's resolve may have slid the expiry a moment before the write landed.
      const resolvedActivity = Date.parse(principal.expiresAt) - sessions.timeoutMs;
      if (Number.isFinite(resolvedActivity) && resolvedActivity > view.lastActivityAt.getTime()) {
        view.lastActivityAt = new Date(resolvedActivity);
      }
      return { body: dataEnvelope(currentApiSessionDetail(view, sessions.expiry(view), state)) };
    },
    async deleteCurrentApiSession(ctx) {
      await sessions.logout(principalOf(ctx).apiSessionId);
      return { body: emptyEnvelope() };
    },
    async getCurrentIdentity(ctx) {
      const view = await identities.detail(principalOf(ctx).identityId).catch((err: unknown) => {
        throw err instanceof ApiError && err.code === 'NOT_FOUND' ? ApiError.of('UNAUTHORIZED') : err;
      });
      return { body: dataEnvelope(currentIdentityDetail(view)) };
    },
  };
}
