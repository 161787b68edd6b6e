import type { IncomingMessage, ServerResponse } from 'node:http';
import { INTERNAL_HEADER_PREFIX } from '@ziti/http-kit';

export const CORS_ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE';
export const CORS_ALLOWED_HEADERS = 'content-type, accept, authorization, zt-session';
/**
 * The request's id on every response (the id of `error.requestId` and of the gateway's log lines),
 * so a caller can quote it for a successful request too.
 */
export const REQUEST_ID_RESPONSE_HEADER = 'x-request-id';

/** Response headers that browser clients (ZAC and the browser SDK) read. */
export const CORS_EXPOSED_HEADERS = [
  'zt-session',
  'expiration-seconds',
  'expires-at',
  'ziti-instance-id',
  'ziti-authenticator-extend-requested',
  'www-authenticate',
  'content-disposition',
  REQUEST_ID_RESPONSE_HEADER,
].join(', ');
const CORS_MAX_AGE_SECONDS = '600';

/**
 * Removes every inbound header named `x-ziti-*` (the internal principal, request id and any
 * future internal header): only the gateway sets them, never a caller. (`req.headers` is what
 * is forwarded; `rawHeaders` is left alone, Node derives `headersDistinct` from it.)
 */
export function stripInternalHeaders(req: IncomingMessage): void {
  for (const name of Object.keys(req.headers)) {
    if (name.startsWith(INTERNAL_HEADER_PREFIX)) delete req.headers[name];
  }
}

/** `ziti-instance-id` and `server`, on every response. */
export function setServerHeaders(res: ServerResponse, instanceId: string, version: string): void {
  res.setHeader('ziti-instance-id', instanceId);
  res.setHeader('server', `ziti-controller/${version}`);
}

/**
 * CORS as the controller configures it: any origin (echoed, since credentials are allowed),
 * credentials, and the headers clients read. Nothing is added to a request without `Origin`.
 */
export function setCorsHeaders(req: IncomingMessage, res: ServerResponse): void {
  const origin = req.headers.origin;
  if (typeof origin !== 'string' || origin.length === 0) return;
  res.setHeader('access-control-allow-origin', origin);
  res.setHeader('access-control-allow-credentials', 'true');
  res.setHeader('access-control-expose-headers', CORS_EXPOSED_HEADERS);
  res.setHeader('vary', 'Origin');
}

/** Answers an OPTIONS request (CORS preflight) directly: 200, no body. */
export function answerPreflight(req: IncomingMessage, res: ServerResponse): void {
  if (typeof req.headers.origin === 'string' && req.headers.origin.length > 0) {
    res.setHeader('access-control-allow-methods', CORS_ALLOWED_METHODS);
    res.setHeader('access-control-allow-headers', CORS_ALLOWED_HEADERS);
    res.setHeader('access-control-max-age', CORS_MAX_AGE_SECONDS);
  }
  res.setHeader('allow', `${CORS_ALLOWED_METHODS}, OPTIONS`);
  res.setHeader('content-length', '0');
  res.statusCode = 200;
  res.end();
}
