import { Metadata } from '@grpc/grpc-js';
import { fromGrpcError } from '@ziti/errors';
import { IdentityAuthServiceClient } from '@ziti/proto';
import type { Address } from './policy-client.js';
import { grpcClient } from '@ziti/service-kit';

/** Whether an identity exists: true, false, or undefined when identity-auth can not say (UNIMPLEMENTED, unreachable). */
export interface IdentityLookup {
  exists(identityId: string): Promise<boolean | undefined>;
  close(): void;
}

/** identity-auth's `GetIdentity` over gRPC. */
export function grpcIdentityLookup(address: Address | undefined, log: (m: string) => void): IdentityLookup {
  let client: IdentityAuthServiceClient | undefined;
  let warned = false;
  return {
    exists(identityId) {
      const addr = typeof address === 'function' ? address() : address;
      if (!addr) return Promise.resolve(undefined);
      client ??= grpcClient(IdentityAuthServiceClient, addr, 'posture');
      return new Promise((resolve) => {
        client!.getIdentity({ identityId }, new Metadata(), { deadline: Date.now() + 5000 }, (err) => {
          if (!err) return resolve(true);
          const apiErr = fromGrpcError(err);
          if (apiErr.code === 'NOT_FOUND') return resolve(false);
          if (!warned) {
            warned = true;
            log(`posture: identity-auth GetIdentity unavailable (${err.message}); identities are not checked`);
          }
          resolve(undefined);
        });
      });
    },
    close() {
      client?.close();
    },
  };
}
