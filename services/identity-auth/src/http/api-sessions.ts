import { dataEnvelope, emptyEnvelope } from '@ziti/errors';
import type { Handler } from '@ziti/http-kit';
import type { ApiSessionManager } from '../domain/api-session-manager.js';
import { listRequest, listResult } from './list.js';
import { apiSessionDetail } from './views.js';

/** Management `/api-sessions`. */
export function apiSessionHandlers(sessions: ApiSessionManager): Record<string, Handler> {
  return {
    async listAPISessions(ctx) {
      return listResult(await sessions.list(listRequest(ctx)), (s) => apiSessionDetail(s));
    },
    async detailAPISessions(ctx) {
      return { body: dataEnvelope(apiSessionDetail(await sessions.detail(ctx.params.id!))) };
    },
    async deleteAPISessions(ctx) {
      await sessions.delete(ctx.params.id!);
      return { body: emptyEnvelope() };
    },
  };
}
