import { Metadata, credentials } from '@grpc/grpc-js';
import { ApiError, fromGrpcError } from '@ziti/errors';
import type { RequestPrincipal } from '@ziti/http-kit';
import { IdentityAuthServiceClient } from '@ziti/proto';

/** Resolves a `zt-session` token to its principal (identity-auth's `ResolveApiSession`). */
export interface SessionResolver {
  /** Rejects with the ApiError identity-auth answered (401 for an unknown or expired token). */
  resolve(token: string): Promise<{ principal: RequestPrincipal; cacheTtlSeconds: number }>;
  close(): void;
}

/** A resolver over one long-lived gRPC channel to identity-auth, with a deadline per call. */
export function grpcSessionResolver(address: string, deadlineMs = 5000): SessionResolver {
  const client = new IdentityAuthServiceClient(address, credentials.createInsecure());
  return {
    resolve(token) {
      return new Promise((resolve, reject) => {
        client.resolveApiSession({ token, bearerTokens: [] }, new Metadata(), { deadline: Date.now() + deadlineMs }, (err, res) => {
          if (err) return reject(fromGrpcError(err));
          if (!res?.principal) return reject(ApiError.unhandled(new Error('identity-auth returned no principal')));
          resolve({ principal: res.principal, cacheTtlSeconds: Number(res.cacheTtlSeconds) || 0 });
        });
      });
    },
    close() {
      client.close();
    },
  };
}
