import { dataEnvelope, emptyEnvelope, formatTimestamp, listEnvelope } from '@ziti/errors';
import { type Handler, type HandlerContext, SESSION_CREATED_HEADER, encodeResponseEvent } from '@ziti/http-kit';
import type { Caller, ListRequest, Session } from '../domain/model.js';
import type { ServiceUpdates } from '../domain/service-updates.js';
import type { SessionManager } from '../domain/session-manager.js';
import { sessionDetail } from './views.js';

function queryString(ctx: HandlerContext, name: string): string | undefined {
  const v = ctx.query[name];
  const first = Array.isArray(v) ? v[0] : v;
  return typeof first === 'string' ? first : undefined;
}

function listRequest(ctx: HandlerContext): ListRequest {
  return { filter: queryString(ctx, 'filter'), limit: queryString(ctx, 'limit'), offset: queryString(ctx, 'offset'), sort: queryString(ctx, 'sort') };
}

/** The caller; `mfaCompletedAt` is read when identity-auth puts it on the principal. */
export function caller(ctx: HandlerContext): Caller {
  const p = ctx.principal!;
  const mfa = (p as { mfaCompletedAt?: unknown }).mfaCompletedAt;
  return {
    identityId: p.identityId,
    apiSessionId: p.apiSessionId,
    isAdmin: p.isAdmin || p.isDefaultAdmin,
    ...(typeof mfa === 'string' && mfa !== '' ? { mfaCompletedAt: mfa } : {}),
  };
}

/**
 * `/sessions` on both APIs and client `/current-api-session/service-updates`. With `createdEvents`,
 * a create hands the session it stored back to the gateway on its answer (internal header, for the
 * event stream's `session` records; never passed to the caller).
 */
export function sessionHandlers(sessions: SessionManager, updates: ServiceUpdates, createdEvents = false): Record<string, Handler> {
  return {
    async createSession(ctx) {
      const tell = createdEvents
        ? (s: Session) =>
            ctx.res.setHeader(
              SESSION_CREATED_HEADER,
              encodeResponseEvent({ sessionId: s.id, apiSessionId: s.apiSessionId, identityId: s.identityId, serviceId: s.serviceId, type: s.type }),
            )
        : undefined;
      const s = await sessions.create(caller(ctx), ctx.body ?? {}, tell);
      return { status: 201, body: dataEnvelope(sessionDetail(s)) };
    },
    async listSessions(ctx) {
      const page = await sessions.list(caller(ctx), listRequest(ctx));
      const management = ctx.api === 'management';
      return {
        body: listEnvelope(
          page.items.map((s) => sessionDetail(s, management)),
          { limit: page.limit, offset: page.offset, totalCount: page.totalCount },
          page.filterableFields,
        ),
      };
    },
    async detailSession(ctx) {
      const management = ctx.api === 'management';
      return { body: dataEnvelope(sessionDetail(await sessions.detail(caller(ctx), ctx.params.id!, management), management)) };
    },
    async deleteSession(ctx) {
      await sessions.delete(caller(ctx), ctx.params.id!, ctx.api === 'management');
      return { body: emptyEnvelope() };
    },
    async detailSessionRoutePath() {
      // The controller answers the path of a live circuit of the session; this controller runs no fabric.
      return { body: dataEnvelope({ routePath: [] }) };
    },
    async listServiceUpdates(ctx) {
      return { body: dataEnvelope({ lastChangeAt: formatTimestamp(await updates.lastChangeAt(ctx.principal!.identityId)) }) };
    },
  };
}
