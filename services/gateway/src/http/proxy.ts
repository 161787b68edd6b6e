import { type ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import { Agent } from 'node:https';
import type { Socket } from 'node:net';
import { ApiError, dependencies } from '@ziti/errors';
import { type HttpApp, INTERNAL_HEADER_PREFIX, RESPONSE_EVENT_HEADERS, PRINCIPAL_HEADER, type RequestPrincipal, attachBufferedBody, attachPrincipal, pathOf, sendError, signPrincipal } from '@ziti/http-kit';
import { logger } from '@ziti/log';
import { type ContextName, expectServer, internalCredentials, localHttpApp } from '@ziti/service-kit';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { replaceForwardedHeaders } from './client-address.js';

/** The buffered body and request id the gateway attaches to a request before proxying it. */
export interface ProxiedRequest extends IncomingMessage {
  zitiBody?: Buffer;
  zitiRequestId?: string;
  /** The client's address as the gateway determined it (trusted proxies); else the socket's peer is. */
  zitiClientAddress?: string;
  /** The contract operation id, once the route matched (for the request metrics). */
  zitiOperation?: string;
  /** The response events (`RESPONSE_EVENT_HEADERS`) taken off the context's answer, by header. */
  zitiResponseEvents?: Record<string, string>;
  /** Set when the upstream accepted the request and did not answer within `UPSTREAM_TIMEOUT_MS`. */
  zitiUpstreamTimedOut?: boolean;
}

/**
 * Forwards a request the gateway has authenticated (and whose body it buffered) to one context,
 * with its caller when the route is not anonymous.
 */
export type UpstreamHandler = (req: ProxiedRequest, res: ServerResponse, principal?: RequestPrincipal) => void;

const gatewayLog = logger('gateway');

/** How long an upstream may take to answer (the controller's handler timeout). */
export const UPSTREAM_TIMEOUT_MS = 10_000;

/** 503 in the envelope when a context has no upstream configured. */
export function noUpstreamError(owner: string): ApiError {
  return ApiError.fromCode('UNHANDLED', {
    status: 503,
    message: 'The service that handles this request is not available',
    cause: { code: 'UNHANDLED', message: `no upstream is configured for ${owner}` },
  });
}

/**
 * What a failed proxy request answers: 503 TIMEOUT when the context took the request and did not
 * answer in time, 503 SERVICE_UNAVAILABLE (counted for its outage) when it could not be reached
 * or dropped the connection.
 */
function upstreamError(owner: string, err: Error & { code?: string }, timedOut: boolean): ApiError {
  const cause = { code: 'UNHANDLED', message: `${owner} did not answer: ${err.code ?? err.message}` };
  if (timedOut) return ApiError.of('TIMEOUT', { cause });
  dependencies.failed(`context ${owner}`, err.code ?? err.message);
  return ApiError.of('SERVICE_UNAVAILABLE', { cause });
}

/**
 * Node joins a repeated response header into one comma-separated value (`true, true`); a header a
 * service sent more than once (e.g. `ziti-authenticator-extend-requested` for both the extend and
 * the key-roll request, §9.9) is given back as separate header lines, as the controller sends it.
 */
export function keepRepeatedHeaders(res: IncomingMessage): void {
  const lines = new Map<string, string[]>();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
    const name = res.rawHeaders[i]!.toLowerCase();
    lines.set(name, [...(lines.get(name) ?? []), res.rawHeaders[i + 1]!]);
  }
  for (const [name, values] of lines) {
    if (values.length > 1 && typeof res.headers[name] === 'string' && !name.startsWith(INTERNAL_HEADER_PREFIX)) {
      (res.headers as Record<string, string | string[]>)[name] = values;
    }
  }
}

/**
 * Every `Authorization` line of a request that has more than one (a primary and a secondary
 * bearer token, §3.4). Node keeps only the first in `headers`; these are forwarded as separate
 * lines, so the context sees all of them in `headersDistinct`, as the gateway does.
 */
export function repeatedAuthorization(req: IncomingMessage): string[] | undefined {
  const lines = req.headersDistinct?.authorization;
  return lines && lines.length > 1 ? lines : undefined;
}

/** `headersDistinct` for `headers`: every value as a list (and every `Authorization` line of `req`). */
function distinctOf(headers: IncomingMessage['headers'], req: IncomingMessage): Record<string, string[]> {
  const out: Record<string, string[]> = Object.create(null);
  for (const k in headers) {
    const v = headers[k];
    if (v !== undefined) out[k] = Array.isArray(v) ? v : [v];
  }
  const authorization = repeatedAuthorization(req);
  if (authorization) out.authorization = authorization;
  return out;
}

/**
 * Hands a request to the app of a context that runs in this process (the all-in-one controller):
 * the app gets a request with the headers the proxy would send (request id, the gateway's own
 * `x-forwarded-*` in place of any the caller sent, the body's length, every `Authorization` line) and the buffered body as its stream (and, so that it
 * is not read twice, as the request's buffered body), and answers on the gateway's response. The
 * caller is handed over as is instead of signed into the principal header. Everything else is as
 * through the proxy, without the loopback connection.
 */
export function dispatchLocal(app: HttpApp, req: ProxiedRequest, res: ServerResponse, principal?: RequestPrincipal): void {
  const inner = new IncomingMessage(req.socket);
  inner._read = () => undefined; // the body is pushed below; the client's socket is not touched
  inner.method = req.method;
  inner.url = req.url;
  inner.httpVersion = req.httpVersion;
  inner.httpVersionMajor = req.httpVersionMajor;
  inner.httpVersionMinor = req.httpVersionMinor;
  const headers = { ...req.headers };
  replaceForwardedHeaders(headers, req.socket, req.zitiClientAddress);
  const body = req.zitiBody;
  const framed = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
  if (body && (body.length > 0 || framed)) {
    delete headers['transfer-encoding'];
    headers['content-length'] = String(body.length);
  } else if ((req.method === 'DELETE' || req.method === 'OPTIONS') && headers['content-length'] === undefined) {
    headers['content-length'] = '0'; // as the proxy sends them (http-proxy's deleteLength)
    delete headers['transfer-encoding'];
  }
  inner.headers = headers;
  // As the proxy sends them: one line per value of `headers`. Built when first read: most requests never need them.
  let raw: string[] | undefined;
  let distinct: Record<string, string[]> | undefined;
  const distinctView = () => (distinct ??= distinctOf(headers, req));
  Object.defineProperties(inner, {
    headersDistinct: { get: distinctView, configurable: true, enumerable: true },
    rawHeaders: {
      get: () => (raw ??= Object.entries(distinctView()).flatMap(([name, values]) => values.flatMap((v) => [name, v]))),
      configurable: true,
      enumerable: true,
    },
  });
  if (body && body.length > 0) inner.push(body);
  inner.push(null);
  inner.complete = true;
  if (body) attachBufferedBody(inner, body);
  if (principal) attachPrincipal(inner, principal);
  if (RESPONSE_EVENT_OPERATIONS.has(req.zitiOperation ?? '')) takeResponseEvents(req, res);
  app(inner, res);
}

/** The operations whose answers may carry response events (`RESPONSE_EVENT_HEADERS`). */
export const RESPONSE_EVENT_OPERATIONS: ReadonlySet<string> = new Set(['authenticate', 'createSession']);

/** Takes the response event headers off the answer as its headers are written (as the proxy does). */
function takeResponseEvents(req: ProxiedRequest, res: ServerResponse): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    res.writeHead = writeHead;
    for (const name of RESPONSE_EVENT_HEADERS) {
      const value = res.getHeader(name);
      if (value === undefined) continue;
      (req.zitiResponseEvents ??= {})[name] = String(value);
      res.removeHeader(name);
    }
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as typeof res.writeHead;
}

/**
 * A reverse proxy (http-proxy-middleware) to one context. It forwards the request with its
 * (already normalised) `req.url`, its headers as the gateway left them (principal and request id
 * included, every `Authorization` line), the gateway's own `x-forwarded-*` (the client address it
 * determined; whatever forwarding headers the caller sent are dropped, see
 * `replaceForwardedHeaders`), and the body the gateway buffered.
 * An upstream that cannot be reached becomes 503 `SERVICE_UNAVAILABLE`, one that does not answer in
 * time 503 `TIMEOUT`, both in the envelope; `x-ziti-*` response headers
 * never leave the gateway.
 * When the context's app listens in this process, requests go to it directly instead.
 */
/**
 * The HTTPS agent of the gateway's calls to context `owner`: mutual TLS with the gateway's internal
 * identity, and the server must prove it is `owner`. A renewed certificate is used from the next
 * connection on.
 */
function internalAgent(owner: ContextName): Agent {
  const creds = internalCredentials('gateway');
  // Idle upstream sockets are dropped well before the services' keep-alive timeout (65 s), so a
  // request never lands on a socket the upstream is closing.
  const agent = new Agent({ keepAlive: true, timeout: 30_000, ...creds.tlsOptions(), servername: owner, checkServerIdentity: expectServer(owner) });
  creds.onUpdate(() => Object.assign((agent as unknown as { options: object }).options, creds.tlsOptions()));
  return agent;
}

export function createUpstreamProxy(
  owner: ContextName,
  target: string,
  internalSecret: string,
  log: (m: string) => void,
): { handler: UpstreamHandler; close(): void } {
  if (!target.startsWith('https://')) throw new Error(`gateway: the address of ${owner} must be https:// (the contexts answer only over mutual TLS), got ${target}`);
  const agent = internalAgent(owner);
  const handler = createProxyMiddleware<ProxiedRequest, ServerResponse>({
    target,
    changeOrigin: false,
    // The forwarding headers are replaced before the hand-over (xfwd would append to the caller's).
    xfwd: false,
    agent,
    proxyTimeout: UPSTREAM_TIMEOUT_MS,
    on: {
      proxyReq: (proxyReq: ClientRequest, req: ProxiedRequest) => {
        proxyReq.once('timeout', () => (req.zitiUpstreamTimedOut = true));
        const authorization = repeatedAuthorization(req);
        if (authorization) proxyReq.setHeader('authorization', authorization);
        const body = req.zitiBody;
        const framed = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
        if (!body || (body.length === 0 && !framed)) return;
        proxyReq.removeHeader('transfer-encoding');
        proxyReq.setHeader('content-length', String(body.length));
        if (body.length > 0) proxyReq.write(body);
      },
      proxyRes: (proxyRes: IncomingMessage, req: ProxiedRequest) => {
        for (const name of RESPONSE_EVENT_HEADERS) {
          const value = proxyRes.headers[name];
          if (typeof value === 'string') (req.zitiResponseEvents ??= {})[name] = value;
        }
        for (const name of Object.keys(proxyRes.headers)) {
          if (name.startsWith(INTERNAL_HEADER_PREFIX)) delete proxyRes.headers[name];
        }
        keepRepeatedHeaders(proxyRes);
      },
      error: (err: Error, req: ProxiedRequest, res: ServerResponse | Socket) => {
        const timedOut = req.zitiUpstreamTimedOut === true;
        // The path only: query values can hold secrets.
        if (timedOut) log(`proxy to ${owner} timed out for ${req.method} ${pathOf(req.url)} [${req.zitiRequestId ?? ''}]`);
        if (res instanceof ServerResponse && !res.headersSent) {
          sendError(res, upstreamError(owner, err, timedOut), req.zitiRequestId ?? '', gatewayLog);
        } else {
          res.destroy();
        }
      },
    },
  }) as unknown as (req: ProxiedRequest, res: ServerResponse, next: (err?: unknown) => void) => void;
  // A context listening in this process is reached directly (see dispatchLocal).
  const routed: UpstreamHandler = (req, res, principal) => {
    const app = localHttpApp(target);
    if (app) return dispatchLocal(app, req, res, principal);
    replaceForwardedHeaders(req.headers, req.socket, req.zitiClientAddress);
    if (principal) req.headers[PRINCIPAL_HEADER] = signPrincipal(internalSecret, principal, req.zitiRequestId ?? '');
    return handler(req, res, (err?: unknown) => sendError(res, err ?? noUpstreamError(owner), req.zitiRequestId ?? '', gatewayLog));
  };
  return { handler: routed, close: () => agent.destroy() };
}
