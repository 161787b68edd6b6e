import type { ServiceError } from '@grpc/grpc-js';
import { toGrpcError } from '@ziti/errors';
import type { IdentityAuthServiceServer } from '@ziti/proto';
import type { ApiSessionManager } from '../domain/api-session-manager.js';

/** `ziti.v1.IdentityAuthService`: the gateway's token resolution. */
export function identityAuthServer(sessions: ApiSessionManager): IdentityAuthServiceServer {
  return {
    resolveApiSession(call, callback) {
      sessions.resolve(call.request.token).then(
        ({ principal, cacheTtlSeconds }) => callback(null, { principal, cacheTtlSeconds }),
        (err: unknown) => callback(toGrpcError(err) as ServiceError),
      );
    },
  };
}
