import type { IncomingMessage } from 'node:http';
import type { DetailedPeerCertificate, TLSSocket } from 'node:tls';

/**
 * Operations that need the caller's TLS client certificate: certificate authentication, the
 * enroll flows that take a client certificate (generic `/enroll` with `method=ottca|ca`,
 * `/enroll/ottca`, `/enroll/ca`), router certificate extension, and the identity certificate
 * extend flows. For these the gateway forwards the presented chain, signed (`x-ziti-client-cert`).
 */
export const CLIENT_CERT_OPERATIONS: ReadonlySet<string> = new Set([
  'authenticate',
  'enroll',
  'enrollCa',
  'enrollOttCa',
  'extendRouterEnrollment',
  'extendCurrentIdentityAuthenticator',
  'extendVerifyCurrentIdentityAuthenticator',
]);

/**
 * The certificate chain the client presented in the TLS handshake, leaf first, DER (`[]` when it
 * presented none). The listener requests but does not verify client certificates; the services
 * verify the chain (the handshake itself proved the client holds the leaf's private key).
 */
export function peerChain(req: IncomingMessage): Buffer[] {
  const socket = req.socket as Partial<TLSSocket>;
  if (typeof socket.getPeerCertificate !== 'function') return [];
  const out: Buffer[] = [];
  const seen = new Set<string>();
  let cert: DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  while (cert && cert.raw && !seen.has(cert.fingerprint256)) {
    out.push(cert.raw);
    seen.add(cert.fingerprint256);
    cert = cert.issuerCertificate;
  }
  return out;
}
