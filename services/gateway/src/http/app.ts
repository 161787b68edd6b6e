import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { EdgeApiName, Owner } from '@ziti/api-contract';
import { ApiError } from '@ziti/errors';
import { type RequestContext, logger, runWithRequest } from '@ziti/log';
import { observeHttpRequest } from '@ziti/metrics';
import {
  AUTH_OUTCOME_HEADER,
  type AuthOutcome,
  type AccessLine,
  CLIENT_CERT_HEADER,
  SESSION_CREATED_HEADER,
  type SessionCreated,
  decodeAuthOutcome,
  decodeSessionCreated,
  type HttpApp,
  type PrincipalTrace,
  activeTrace,
  MAX_BODY_BYTES,
  REQUEST_ID_HEADER,
  type RequestPrincipal,
  type RouteTable,
  checkAccess,
  logAccess,
  methodOf,
  readBody,
  sendBody,
  sendError,
  sendJson,
  shortId,
  signClientCertChain,
} from '@ziti/http-kit';
import { type Authenticator, type Resolved, bearerTokens, missingTokenError, sessionHeaders, sessionToken } from '../auth/authenticator.js';
import { CLIENT_CERT_OPERATIONS, peerChain } from './client-cert.js';
import type { ConsoleHandler } from './console.js';
import { REQUEST_ID_RESPONSE_HEADER, answerPreflight, setCorsHeaders, setServerHeaders, stripInternalHeaders } from './headers.js';
import type { LocalHandler } from './informational.js';
import { isOidcPath, normalisePath, splitUrl } from './paths.js';
import { type ProxiedRequest, RESPONSE_EVENT_OPERATIONS, type UpstreamHandler, noUpstreamError } from './proxy.js';

/** Where the events contexts hand back on their answers go. */
export interface ResponseEventSink {
  authenticated(outcome: AuthOutcome): void;
  sessionCreated(session: SessionCreated): void;
}
import type { LoginGuard } from '../limits/login-guard.js';

/** Probes on the public listener, outside both APIs' namespace (never aliased). */
export const HEALTH_PATHS = { live: '/ziti-internal/healthz', ready: '/ziti-internal/readyz' } as const;

export interface GatewayAppOptions {
  instanceId: string;
  version: string;
  internalSecret: string;
  routes: RouteTable;
  /** Handlers of the routes the gateway serves itself, by operationId. */
  local: Record<string, LocalHandler>;
  /** Proxies to the contexts that have an upstream. */
  proxies: Partial<Record<Owner, UpstreamHandler>>;
  authenticator: Authenticator;
  /** The swagger JSON of an Edge API (`/edge/<api>/v1/swagger.json`). */
  swaggerJson(api: EdgeApiName): string;
  /** True once shutdown began: readiness fails and connections are not kept alive. */
  draining(): boolean;
  /** Whether every context can serve (`health/readiness.ts`); readiness fails while not. Default always. */
  contextsReady?: () => boolean;
  /** The client's address, determined once per request (`http/client-address.ts`); default the socket's peer. */
  clientAddress?: (req: IncomingMessage) => string;
  /** Login and enrollment limits, applied just before a request goes to its context (`limits/login-guard.ts`). */
  loginGuard?: LoginGuard;
  /** Told the events a context handed back on its answer (`RESPONSE_EVENT_HEADERS`) once it is sent: the event stream. */
  responseEvents?: ResponseEventSink;
  /** The admin console (ZAC) at `/zac/` (`http/console.ts`), when a build is configured; without it those paths are 404 as any unknown path. */
  console?: ConsoleHandler;
  /** Where the log lines of traced identities' requests go (`PUT /identities/{id}/trace`). */
  log?: (m: string) => void;
}

/**
 * The log line of a request of a traced identity, written once its answer is sent (or the
 * connection closed): the trace id, request id, identity, method, path, status and latency.
 */
export function logTracedRequest(
  res: ServerResponse,
  trace: PrincipalTrace,
  at: { requestId: string; identityId: string; method: string; path: string; startedAt: number },
  log: (m: string) => void,
): void {
  res.once('close', () => {
    const latencyMs = (performance.now() - at.startedAt).toFixed(1);
    log(
      `trace traceId=${trace.traceId} requestId=${at.requestId} identityId=${at.identityId} method=${at.method} path=${at.path} ` +
        `status=${res.statusCode}${res.writableFinished ? '' : ' (connection closed)'} latencyMs=${latencyMs}`,
    );
  });
}

/** The operation id (metrics, log context) and access-line `api` of a request passed through to the OIDC provider. */
export const OIDC_OPERATION = 'oidc';

/**
 * The caller of a request: its `zt-session` (with its bearer tokens as secondary factors), else
 * its first `Authorization: Bearer` token as an OIDC access token (the others are ignored).
 */
async function principalFor(req: IncomingMessage, opts: GatewayAppOptions): Promise<Resolved> {
  const token = sessionToken(req);
  const bearer = bearerTokens(req);
  if (token) return opts.authenticator.resolveRequest(token, bearer);
  if (bearer.length > 0) return opts.authenticator.resolveAccessToken(bearer[0]!);
  throw missingTokenError();
}

/**
 * The public request pipeline: strip internal headers and assign the request id, server and CORS
 * headers, preflight, the OIDC provider's pass-through (`/oidc`, `/oidc/*`), path aliases,
 * contract match (404/405), the 1 MiB body limit, session authentication for non-anonymous
 * routes, then the gateway's own handler or, past the login limits (logins and enrollments), the
 * owning context.
 */
export function createGatewayApp(opts: GatewayAppOptions): HttpApp {
  const log = logger('gateway');

  async function handle(req: ProxiedRequest, res: ServerResponse, requestId: string, startedAt: number, request: RequestContext, line: AccessLine): Promise<void> {
    if (req.method === 'OPTIONS') return answerPreflight(req, res);

    const { path, search } = splitUrl(req.url ?? '/');
    const collapsed = path.replace(/\/{2,}/g, '/');
    if (collapsed === HEALTH_PATHS.live) return sendJson(res, { service: 'gateway', status: 'ok' });
    if (collapsed === HEALTH_PATHS.ready) {
      const ready = !opts.draining() && (opts.contextsReady?.() ?? true);
      res.statusCode = ready ? 200 : 503;
      return sendJson(res, { service: 'gateway', ready });
    }

    if (opts.console?.owns(collapsed)) return opts.console.serve(req, res, collapsed);
    if (isOidcPath(collapsed)) return passToOidc(req, res, collapsed, search, requestId, request, line);

    const target = normalisePath(path);
    if (!target.api || target.relative === undefined) throw ApiError.of('NOT_FOUND');
    line.api = target.api;
    if (target.api !== 'fabric' && target.relative === '/swagger.json' && (req.method === 'GET' || req.method === 'HEAD')) {
      return sendBody(res, opts.swaggerJson(target.api), 'application/json');
    }
    const { route, params } = opts.routes.match(target.api, req.method ?? 'GET', target.relative);
    req.zitiOperation = route.operationId;
    request.operationId = route.operationId;

    const body = await readBody(req, MAX_BODY_BYTES);

    let principal: RequestPrincipal | undefined;
    if (route.access !== 'anonymous') {
      const resolved = await principalFor(req, opts);
      principal = resolved.principal;
      request.identityId = principal.identityId;
      // Untraced principals carry no trace: this one check is all they cost.
      const trace = activeTrace(principal);
      if (trace && opts.log) logTracedRequest(res, trace, { requestId, identityId: principal.identityId, method: req.method ?? 'GET', path: target.path, startedAt }, opts.log);
      // Legacy sessions only: OpenZiti sends no expiry headers for bearer (OIDC) requests.
      if (!resolved.oidc) for (const [k, v] of Object.entries(sessionHeaders(principal))) res.setHeader(k, v);
      // A partial session reaches only the partial routes; with identity-auth's challenge (secondary ext-jwt) when it gave one.
      if (!principal.isFullyAuthenticated && route.access !== 'partial' && resolved.challenge) {
        throw ApiError.of('UNAUTHORIZED', { headers: { 'WWW-Authenticate': resolved.challenge } });
      }
    }

    if (route.owner === 'gateway') {
      const handler = opts.local[route.operationId];
      if (!handler) throw ApiError.of('NOT_FOUND');
      // The contexts check access in createServiceApp; the gateway checks its own routes' (admin for /summary, /database/*).
      checkAccess(route.access, route.method, principal, route.permission);
      const result = await handler({ api: target.api, params, req, principal });
      res.statusCode = result.status ?? route.success.status;
      if (result.raw !== undefined) return sendBody(res, result.raw, result.contentType ?? 'application/octet-stream');
      return sendJson(res, result.body);
    }

    const proxy = opts.proxies[route.owner];
    if (!proxy) throw noUpstreamError(route.owner);
    const admitted = opts.loginGuard?.admit(route, req, res, body, search);
    if (admitted) await admitted;
    req.url = target.path + search;
    if (CLIENT_CERT_OPERATIONS.has(route.operationId)) {
      const chain = peerChain(req);
      if (chain.length > 0) req.headers[CLIENT_CERT_HEADER] = signClientCertChain(opts.internalSecret, chain, requestId);
    }
    req.zitiBody = body;
    const sink = opts.responseEvents;
    if (sink && RESPONSE_EVENT_OPERATIONS.has(route.operationId)) {
      res.once('close', () => {
        const outcome = decodeAuthOutcome(req.zitiResponseEvents?.[AUTH_OUTCOME_HEADER]);
        if (outcome) sink.authenticated(outcome);
        const session = decodeSessionCreated(req.zitiResponseEvents?.[SESSION_CREATED_HEADER]);
        if (session) sink.sessionCreated(session);
      });
    }
    proxy(req, res, principal);
  }

  /**
   * `/oidc` and `/oidc/*` go to identity-auth's OIDC provider unchanged (path and query): no Edge
   * route, no session check. The body is read under the 1 MiB limit; logins pass the login limits
   * (`LoginGuard.admitOidc`); the TLS client certificate chain, when the handshake carried one, is
   * forwarded signed. The proxy replaces the forwarding headers, so identity-auth reads the public
   * `Host` from `x-forwarded-host` (and `x-forwarded-proto: https`) for its issuer.
   */
  async function passToOidc(req: ProxiedRequest, res: ServerResponse, path: string, search: string, requestId: string, request: RequestContext, line: AccessLine): Promise<void> {
    line.api = OIDC_OPERATION;
    req.zitiOperation = OIDC_OPERATION;
    request.operationId = OIDC_OPERATION;
    const proxy = opts.proxies['identity-auth'];
    if (!proxy) throw noUpstreamError('identity-auth');
    const body = await readBody(req, MAX_BODY_BYTES);
    const admitted = opts.loginGuard?.admitOidc(path, req, res, body);
    if (admitted) await admitted;
    req.url = path + search;
    const chain = peerChain(req);
    if (chain.length > 0) req.headers[CLIENT_CERT_HEADER] = signClientCertChain(opts.internalSecret, chain, requestId);
    req.zitiBody = body;
    proxy(req, res);
  }

  return (req: ProxiedRequest, res: ServerResponse) => {
    stripInternalHeaders(req);
    req.zitiClientAddress = opts.clientAddress?.(req);
    const requestId = shortId();
    req.zitiRequestId = requestId;
    observeHttpRequest(res, 'gateway', () => req.zitiOperation);
    req.headers[REQUEST_ID_HEADER] = requestId;
    setServerHeaders(res, opts.instanceId, opts.version);
    res.setHeader(REQUEST_ID_RESPONSE_HEADER, requestId);
    setCorsHeaders(req, res);
    if (opts.draining()) res.setHeader('connection', 'close');
    const startedAt = performance.now();
    // The access line (one per request) and every line logged while serving it carry the request's ids.
    const request: RequestContext = { requestId };
    const line: AccessLine = { method: methodOf(req), path: splitUrl(req.url ?? '/').path };
    logAccess(log, 'info', res, request, line, startedAt);
    runWithRequest(request, () => handle(req, res, requestId, startedAt, request, line).catch((err: unknown) => sendError(res, err, requestId, log)));
  };
}
