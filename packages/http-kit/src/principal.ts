import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from '@ziti/errors';

/** Header by which the gateway forwards the signed principal to the services. */
export const PRINCIPAL_HEADER = 'x-ziti-principal';
/** Header by which the gateway forwards its request id. */
export const REQUEST_ID_HEADER = 'x-ziti-request-id';
/** Every inbound header with this prefix is internal and is stripped by the gateway. */
export const INTERNAL_HEADER_PREFIX = 'x-ziti-';

/** The caller of a request, as the services see it. Mirrors proto `ziti.v1.Principal`. */
export interface RequestPrincipal {
  identityId: string;
  identityName: string;
  apiSessionId: string;
  isAdmin: boolean;
  isDefaultAdmin: boolean;
  isFullyAuthenticated: boolean;
  permissions: string[];
  configTypes: string[];
  authenticatorId: string;
  expiresAt: string;
  expirationSeconds: number;
  identityTypeId: string;
  /** When the API session completed its TOTP factor (RFC 3339); empty or absent when it has not. */
  mfaCompletedAt?: string;
  /** While the identity is traced (until `until`, RFC 3339): the gateway logs its requests with `traceId`. */
  trace?: PrincipalTrace;
}

/** An identity's trace, as the principal carries it (proto `ziti.v1.PrincipalTrace`). */
export interface PrincipalTrace {
  traceId: string;
  until: string;
  channels: string[];
}

/** The trace of a principal that is in force at `now`, if any (the one check the gateway makes per request). */
export function activeTrace(principal: Pick<RequestPrincipal, 'trace'> | undefined, now = Date.now()): PrincipalTrace | undefined {
  const t = principal?.trace;
  return t && t.traceId && Date.parse(t.until) > now ? t : undefined;
}

interface TokenBody {
  p: RequestPrincipal;
  rid: string;
  exp: number;
}

const b64url = (buf: Buffer | string) => Buffer.from(buf).toString('base64url');

/**
 * Signs a principal for one request (HMAC-SHA256 over a compact `body.sig` token, valid for
 * `ttlSeconds`). The gateway signs; services verify with the same internal secret.
 */
export function signPrincipal(secret: string, principal: RequestPrincipal, requestId: string, ttlSeconds = 30): string {
  const body: TokenBody = { p: principal, rid: requestId, exp: Math.floor(Date.now() / 1000) + ttlSeconds };
  const payload = b64url(JSON.stringify(body));
  const sig = createHmac('sha256', secret).update(payload).digest('base64url');
  return `${payload}.${sig}`;
}

/** Verifies a principal token; throws 401 UNAUTHORIZED when it is forged, malformed or stale. */
export function verifyPrincipal(secret: string, token: string): { principal: RequestPrincipal; requestId: string } {
  const dot = token.indexOf('.');
  if (dot <= 0) throw ApiError.of('UNAUTHORIZED');
  const payload = token.slice(0, dot);
  const sig = Buffer.from(token.slice(dot + 1), 'base64url');
  const expected = createHmac('sha256', secret).update(payload).digest();
  if (sig.length !== expected.length || !timingSafeEqual(sig, expected)) throw ApiError.of('UNAUTHORIZED');
  let body: TokenBody;
  try {
    body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as TokenBody;
  } catch {
    throw ApiError.of('UNAUTHORIZED');
  }
  if (typeof body.exp !== 'number' || body.exp < Math.floor(Date.now() / 1000)) throw ApiError.of('UNAUTHORIZED');
  return { principal: body.p, requestId: body.rid };
}
