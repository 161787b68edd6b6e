import type { ServiceError } from '@grpc/grpc-js';
import { ApiError, toGrpcError } from '@ziti/errors';
import { isStorableText } from '@ziti/http-kit';
import { type SessionServiceServer, SessionServiceService } from '@ziti/proto';
import type { GrpcServiceBinding } from '@ziti/service-kit';
import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import type { SessionFacts } from '../domain/model.js';

/** The most ids one `GetSessions` call may name. */
export const MAX_SESSIONS_PER_CALL = 1000;

/**
 * `ziti.v1.SessionService` (the router control plane, fabric): the sessions routers present for
 * binds and dials. Unknown ids are left out; more than 1000 distinct ids are INVALID_ARGUMENT.
 */
export function sessionService(sessions: { factsByIds(ids: readonly string[]): Promise<SessionFacts[]> }): GrpcServiceBinding {
  const implementation: SessionServiceServer = {
    getSessions(call, callback) {
      const run = async () => {
        const ids = [...new Set((call.request.ids ?? []).filter((id) => typeof id === 'string' && id.length > 0))];
        if (ids.length > MAX_SESSIONS_PER_CALL) throw ApiError.field('ids', `at most ${MAX_SESSIONS_PER_CALL} ids per call`, ids.length);
        // An id PostgreSQL cannot hold names no session.
        const lookable = ids.filter((id) => id.length <= 256 && isStorableText(id));
        const found = lookable.length > 0 ? await sessions.factsByIds(lookable) : [];
        return { sessions: found.map((s) => ({ id: s.id, apiSessionId: s.apiSessionId, identityId: s.identityId, serviceId: s.serviceId, type: s.type })) };
      };
      run().then(
        (res) => callback(null, res),
        (err: unknown) => callback(toGrpcError(err) as ServiceError),
      );
    },
  };
  return { definition: SessionServiceService, implementation: implementation as unknown as UntypedServiceImplementation };
}
