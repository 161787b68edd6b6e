import { Metadata } from '@grpc/grpc-js';
import { ApiError, fromGrpcError } from '@ziti/errors';
import type { RequestPrincipal } from '@ziti/http-kit';
import { IdentityAuthServiceClient, type ResolveApiSessionRequest } from '@ziti/proto';
import { grpcClient } from '@ziti/service-kit';

/** What identity-auth answered about a session: its principal, the cache hint, and the challenge of a partial session. */
export interface ResolvedSession {
  principal: RequestPrincipal;
  cacheTtlSeconds: number;
  wwwAuthenticate?: string;
}

/** Resolves a `zt-session` token or an OIDC access token to its principal (identity-auth's `ResolveApiSession`). */
export interface SessionResolver {
  /**
   * Rejects with the ApiError identity-auth answered (401 for an unknown or expired token).
   * `bearerTokens` are the request's `Authorization: Bearer` tokens (secondary factors).
   */
  resolve(token: string, bearerTokens?: readonly string[]): Promise<ResolvedSession>;
  /**
   * The API session of an OIDC access token (a request's first bearer token, without `zt-session`):
   * identity-auth checks its signature, expiry, revocations, API session and identity. Rejects
   * with the ApiError it answered (401 with the `Bearer realm="openziti-oidc"` challenge).
   */
  resolveAccessToken(accessToken: string): Promise<ResolvedSession>;
  close(): void;
}

/** A resolver over one long-lived gRPC channel to identity-auth, with a deadline per call. */
export function grpcSessionResolver(address: string, deadlineMs = 5000): SessionResolver {
  const client = grpcClient(IdentityAuthServiceClient, address, 'gateway');
  const ask = (request: ResolveApiSessionRequest) =>
    new Promise<ResolvedSession>((resolve, reject) => {
      client.resolveApiSession(request, new Metadata(), { deadline: Date.now() + deadlineMs }, (err, res) => {
        if (err) return reject(fromGrpcError(err));
        if (!res?.principal) return reject(ApiError.unhandled(new Error('identity-auth returned no principal')));
        // `wwwAuthenticate`: the challenge of a session left partial by this request's bearer tokens.
        const challenge = res.wwwAuthenticate;
        resolve({ principal: res.principal, cacheTtlSeconds: Number(res.cacheTtlSeconds) || 0, ...(challenge ? { wwwAuthenticate: challenge } : {}) });
      });
    });
  return {
    resolve: (token, bearerTokens = []) => ask({ token, bearerTokens: [...bearerTokens], accessToken: '' }),
    resolveAccessToken: (accessToken) => ask({ token: '', bearerTokens: [], accessToken }),
    close() {
      client.close();
    },
  };
}
