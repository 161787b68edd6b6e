import { dataEnvelope, emptyEnvelope } from '@ziti/errors';
import { type Handler, type HandlerContext, isAdminCaller } from '@ziti/http-kit';
import type { ApiSessionManager } from '../domain/api-session-manager.js';
import type { ApiSessionView } from '../domain/model.js';
import { listRequest, listResult } from './list.js';
import { apiSessionDetail } from './views.js';

/**
 * A session as the caller may see it: its token (a credential: whoever holds it is that identity)
 * only for admins; `admin_readonly` reads `token` as '' (required in the spec).
 */
const visibleTo = (ctx: HandlerContext) => (s: ApiSessionView) => apiSessionDetail(isAdminCaller(ctx.principal) ? s : { ...s, token: '' });

/** Management `/api-sessions`. */
export function apiSessionHandlers(sessions: ApiSessionManager): Record<string, Handler> {
  return {
    async listAPISessions(ctx) {
      return listResult(await sessions.list(listRequest(ctx)), visibleTo(ctx));
    },
    async detailAPISessions(ctx) {
      return { body: dataEnvelope(visibleTo(ctx)(await sessions.detail(ctx.params.id!))) };
    },
    async deleteAPISessions(ctx) {
      await sessions.delete(ctx.params.id!);
      return { body: emptyEnvelope() };
    },
  };
}
