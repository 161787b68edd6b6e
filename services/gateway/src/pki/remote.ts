import { createPublicKey } from 'node:crypto';
import { Metadata } from '@grpc/grpc-js';
import { fromGrpcError } from '@ziti/errors';
import { PkiEnrollmentServiceClient, type ServerCertificate } from '@ziti/proto';
import { grpcClient } from '@ziti/service-kit';
import { EDGE_SERVER_KEY_PURPOSE, deriveEcKey } from '@ziti/x509';

/** The TLS material the gateway serves. */
export interface TlsCredentials {
  keyPem: string;
  /** Server certificate followed by its issuing intermediate. */
  certPem: string;
  /** The root(s) clients must trust. */
  caCertPem: string;
}

export interface RemotePki {
  /** Fetches the certificate once (fails fast). */
  fetch(): Promise<TlsCredentials>;
  /** Fetches, retrying (backoff up to 5 s) until pki-enrollment answers or `maxWaitMs` passed. */
  fetchWithRetry(maxWaitMs: number, log: (m: string) => void): Promise<TlsCredentials>;
  close(): void;
}

/**
 * The edge API's server key is the gateway's own, derived from `serverKeySecret`
 * (`ZITI_SERVER_KEY_SECRET`, which pki-enrollment holds too: the same key signs the JWTs that SDKs
 * verify against the certificate served at their `iss`). The gateway sends only its public key,
 * with the names to cover and the advertised address (pki-enrollment records it as the JWT
 * issuer), and gets the certificate of the controller PKI (`IssueServerCertificate`); no private
 * key crosses the wire.
 */
export function remotePki(address: string, request: { sans: readonly string[]; advertisedAddress: string; serverKeySecret: string }, deadlineMs = 5000): RemotePki {
  const client = grpcClient(PkiEnrollmentServiceClient, address, 'gateway');
  const key = deriveEcKey(request.serverKeySecret, EDGE_SERVER_KEY_PURPOSE);
  const keyPem = key.export({ type: 'pkcs8', format: 'pem' }).toString();
  const publicKeyPem = createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString();
  const fetchOnce = () =>
    new Promise<TlsCredentials>((resolve, reject) => {
      client.issueServerCertificate(
        { sans: [...request.sans], advertisedAddress: request.advertisedAddress, publicKeyPem },
        new Metadata(),
        { deadline: Date.now() + deadlineMs },
        (err, res: ServerCertificate) => {
          if (err) return reject(fromGrpcError(err));
          resolve({ keyPem, certPem: res.certPem, caCertPem: res.rootCaPem || res.caBundlePem });
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
          if (Date.now() + delay > until) throw new Error(`gateway: no server certificate from pki-enrollment at ${address}: ${(err as Error).message}`);
          if (attempt === 1 || attempt % 10 === 0) log(`waiting for pki-enrollment at ${address} (${(err as Error).message})`);
          await new Promise((r) => setTimeout(r, delay));
          delay = Math.min(delay * 2, 5000);
        }
      }
    },
    close: () => client.close(),
  };
}
