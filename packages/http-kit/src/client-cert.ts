import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ApiError } from '@ziti/errors';
import { REQUEST_ID_HEADER } from './principal.js';

/**
 * Header by which the gateway forwards the client certificate chain a caller presented in the
 * TLS handshake (mTLS). Like the principal it is a gateway-signed token, never a raw certificate
 * a client could forge: the gateway strips every inbound `x-ziti-*` header, and services verify
 * the HMAC with the internal secret before they look at the chain.
 */
export const CLIENT_CERT_HEADER = 'x-ziti-client-cert';

/** Domain separation: a principal token can never verify as a client-certificate token. */
const DOMAIN = 'ziti-client-cert:';

interface CertTokenBody {
  /** The chain as presented, leaf first, base64 DER. */
  c: string[];
  rid: string;
  exp: number;
}

const hmac = (secret: string, payload: string) => createHmac('sha256', secret).update(DOMAIN + payload);

/**
 * Signs the presented chain (leaf first, DER) for one request (HMAC-SHA256, valid `ttlSeconds`).
 * `requestId` binds the token to the request it travels with.
 */
export function signClientCertChain(secret: string, chainDer: readonly Buffer[], requestId: string, ttlSeconds = 30): string {
  const body: CertTokenBody = { c: chainDer.map((d) => d.toString('base64')), rid: requestId, exp: Math.floor(Date.now() / 1000) + ttlSeconds };
  const payload = Buffer.from(JSON.stringify(body)).toString('base64url');
  return `${payload}.${hmac(secret, payload).digest('base64url')}`;
}

/**
 * Verifies a client-certificate token and returns the chain (leaf first, DER). Throws 401
 * UNAUTHORIZED when it is forged, malformed, stale, or bound to another request id.
 */
export function verifyClientCertChain(secret: string, token: string, requestId?: string): Buffer[] {
  const dot = token.indexOf('.');
  if (dot <= 0) throw ApiError.of('UNAUTHORIZED');
  const payload = token.slice(0, dot);
  const sig = Buffer.from(token.slice(dot + 1), 'base64url');
  const expected = hmac(secret, payload).digest();
  if (sig.length !== expected.length || !timingSafeEqual(sig, expected)) throw ApiError.of('UNAUTHORIZED');
  let body: CertTokenBody;
  try {
    body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as CertTokenBody;
  } catch {
    throw ApiError.of('UNAUTHORIZED');
  }
  if (typeof body.exp !== 'number' || body.exp < Math.floor(Date.now() / 1000) || !Array.isArray(body.c)) throw ApiError.of('UNAUTHORIZED');
  if (requestId !== undefined && body.rid !== requestId) throw ApiError.of('UNAUTHORIZED');
  return body.c.map((b) => Buffer.from(String(b), 'base64'));
}

/**
 * The client certificate chain the gateway forwarded with a request (leaf first, DER), or `[]`
 * when the caller presented none. A header that does not verify is refused with 401.
 */
export function clientCertChainOf(req: IncomingMessage, secret: string): Buffer[] {
  const token = req.headers[CLIENT_CERT_HEADER];
  if (typeof token !== 'string' || token.length === 0) return [];
  const rid = req.headers[REQUEST_ID_HEADER];
  return verifyClientCertChain(secret, token, typeof rid === 'string' && rid.length > 0 ? rid : undefined);
}
