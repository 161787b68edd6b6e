import { Metadata } from '@grpc/grpc-js';
import { ApiError, fromGrpcError } from '@ziti/errors';
import type { RequestPrincipal } from '@ziti/http-kit';
import { IdentityAuthServiceClient } from '@ziti/proto';
import { grpcClient } from '@ziti/service-kit';

/** Resolves a `zt-session` token to its principal (identity-auth's `ResolveApiSession`). */
export interface SessionResolver {
  /**
   * Rejects with the ApiError identity-auth answered (401 for an unknown or expired token).
   * `bearerTokens` are the request's `Authorization: Bearer` tokens (secondary factors).
   */
  resolve(token: string, bearerTokens?: readonly string[]): Promise<{ principal: RequestPrincipal; cacheTtlSeconds: number; wwwAuthenticate?: string }>;
  close(): void;
}

/** A resolver over one long-lived gRPC channel to identity-auth, with a deadline per call. */
export function grpcSessionResolver(address: string, deadlineMs = 5000): SessionResolver {
  const client = grpcClient(IdentityAuthServiceClient, address, 'gateway');
  return {
    resolve(token, bearerTokens = []) {
      return new Promise((resolve, reject) => {
        client.resolveApiSession({ token, bearerTokens: [...bearerTokens], accessToken: '' }, new Metadata(), { deadline: Date.now() + deadlineMs }, (err, res) => {
          if (err) return reject(fromGrpcError(err));
          if (!res?.principal) return reject(ApiError.unhandled(new Error('identity-auth returned no principal')));
          // `wwwAuthenticate`: the challenge of a session left partial by this request's bearer tokens.
          const challenge = (res as { wwwAuthenticate?: string }).wwwAuthenticate;
          resolve({ principal: res.principal, cacheTtlSeconds: Number(res.cacheTtlSeconds) || 0, ...(challenge ? { wwwAuthenticate: challenge } : {}) });
        });
      });
    },
    close() {
      client.close();
    },
  };
}
