import { Metadata } from '@grpc/grpc-js';
import { fromGrpcError } from '@ziti/errors';
import { PkiEnrollmentServiceClient, type ServerCredentials } from '@ziti/proto';
import { grpcClient } from '@ziti/service-kit';

/** The TLS material the gateway serves, from pki-enrollment. */
export interface TlsCredentials {
  keyPem: string;
  /** Server certificate followed by its issuing intermediate. */
  certPem: string;
  /** The root(s) clients must trust. */
  caCertPem: string;
}

export interface RemotePki {
  /** Fetches the credentials once (fails fast). */
  fetch(): Promise<TlsCredentials>;
  /** Fetches, retrying (backoff up to 5 s) until pki-enrollment answers or `maxWaitMs` passed. */
  fetchWithRetry(maxWaitMs: number, log: (m: string) => void): Promise<TlsCredentials>;
  close(): void;
}

/**
 * The controller PKI lives in pki-enrollment: the gateway asks it for the edge API's server
 * credentials (`GetServerCredentials` with the names to cover and the advertised address, which
 * pki-enrollment records as the issuer of enrollment JWTs: the JWT signer is this certificate).
 */
export function remotePki(address: string, request: { sans: readonly string[]; advertisedAddress: string }, deadlineMs = 5000): RemotePki {
  const client = grpcClient(PkiEnrollmentServiceClient, address, 'gateway');
  const fetchOnce = () =>
    new Promise<TlsCredentials>((resolve, reject) => {
      client.getServerCredentials(
        { sans: [...request.sans], advertisedAddress: request.advertisedAddress },
        new Metadata(),
        { deadline: Date.now() + deadlineMs },
        (err, res: ServerCredentials) => {
          if (err) return reject(fromGrpcError(err));
          resolve({ keyPem: res.keyPem, certPem: res.certPem, caCertPem: res.rootCaPem || res.caBundlePem });
        },
      );
    });
  return {
    fetch: fetchOnce,
    async fetchWithRetry(maxWaitMs, log) {
      const until = Date.now() + maxWaitMs;
      let delay = 250;
      for (let attempt = 1; ; attempt++) {
        try {
          return await fetchOnce();
        } catch (err) {
          if (Date.now() + delay > until) throw new Error(`gateway: no TLS credentials from pki-enrollment at ${address}: ${(err as Error).message}`);
          if (attempt === 1 || attempt % 10 === 0) log(`waiting for pki-enrollment at ${address} (${(err as Error).message})`);
          await new Promise((r) => setTimeout(r, delay));
          delay = Math.min(delay * 2, 5000);
        }
      }
    },
    close: () => client.close(),
  };
}
