import { type ServiceError, status } from '@grpc/grpc-js';
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
    getIdentity: notYet,
    createCertAuthenticator: notYet,
    createUpdbAuthenticator: notYet,
    createIdentityFromCa: notYet,
    deleteCaAuthenticators: notYet,
  };
}

/** RPCs of the contract that this context does not serve yet answer UNIMPLEMENTED. */
function notYet(_call: unknown, callback: (err: Partial<ServiceError>) => void): void {
  callback({ code: status.UNIMPLEMENTED, details: 'not implemented yet' });
}
