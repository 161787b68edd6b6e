import type { IncomingMessage, ServerResponse } from 'node:http';
import { API_NAMES, type ApiName, type Owner, type RouteDef, routesFor } from '@ziti/api-contract';
import { ApiError } from '@ziti/errors';
import { type RequestContext, logger, runWithRequest } from '@ziti/log';
import { observeHttpRequest } from '@ziti/metrics';
import { checkAccess } from './access.js';
import { logAccess, methodOf, pathOf } from './access-log.js';
import { type HttpApp, handedOverPrincipal, hasBody, isJsonMediaType, mediaTypeOf, readJsonBody, sendBody, sendError, sendJson } from './http.js';
import { headerValue } from './header-value.js';
import { shortId } from './ids.js';
import { PRINCIPAL_HEADER, REQUEST_ID_HEADER, type RequestPrincipal, verifyPrincipal } from './principal.js';
import { parseQueryString } from './query-string.js';
import { RouteTable } from './route-table.js';
import { assertStorableRequest } from './text.js';
import { validateBody } from './validate.js';
import { processShuttingDown } from './lifecycle.js';

export const API_BASES: Record<ApiName, string> = {
  client: '/edge/client/v1',
  management: '/edge/management/v1',
  fabric: '/fabric/v1',
};

/** A context's request, with what the app learnt about it. */
export interface ServiceRequest extends IncomingMessage {
  /** The parsed JSON body (undefined when there is none, or it is not JSON). */
  body?: unknown;
  zitiRequestId?: string;
  zitiPrincipal?: RequestPrincipal;
  /** The contract operation id, once the route matched (for the request metrics). */
  zitiOperation?: string;
}

/** What a handler receives: parsed and validated input, the caller, and the raw request. */
export interface HandlerContext<B = any> {
  api: ApiName;
  route: RouteDef;
  params: Record<string, string>;
  query: Record<string, string | string[] | undefined>;
  body: B;
  principal?: RequestPrincipal;
  requestId: string;
  req: ServiceRequest;
  res: ServerResponse;
}

/** What a handler returns; the kit writes it. `body` is sent as JSON unless `raw` is given. */
export interface HandlerResult {
  status?: number;
  body?: unknown;
  raw?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
}

/** Records the outcome of one handled request: `error` is what the handler threw, if it did. */
export type OutcomeRecorder = (ctx: HandlerContext, error?: unknown) => void;

/** The error code of what a handler threw (bounded: the catalogue's codes), for outcome labels. */
export function outcomeCode(error: unknown): string {
  return error instanceof ApiError ? error.code : 'UNHANDLED';
}

export type Handler = (ctx: HandlerContext) => Promise<HandlerResult> | HandlerResult;

export interface ServiceAppOptions {
  owner: Owner;
  /** Secret shared with the gateway, used to verify the signed principal. */
  internalSecret: string;
  /** Handlers by operationId; every route the contract gives this owner must have one. */
  handlers: Record<string, Handler>;
  /** Defaults to every contract route of `owner`. */
  routes?: readonly RouteDef[];
  /**
   * Called once a handler of that operation id ran, with its error when it threw (the outcome
   * counters of logins, enrollments and session creates). Must be cheap and never throw.
   */
  outcomes?: Record<string, OutcomeRecorder>;
  /** Readiness probe for `/readyz` (database reachable and so on). */
  ready?: () => Promise<boolean>;
  /**
   * Paths equal to `prefix` or under `prefix/` (e.g. `/oidc`), served by `handle` instead of the
   * route table: no principal, no body reading; what it throws is rendered in the envelope.
   */
  raw?: RawHandler;
}

/** A handler of every request under one path prefix (see `ServiceAppOptions.raw`). */
export interface RawHandler {
  prefix: string;
  handle(req: ServiceRequest, res: ServerResponse, requestId: string): Promise<void>;
}

/** True when `path` is `prefix` or under `prefix/`. */
function isUnder(path: string, prefix: string): boolean {
  return path.startsWith(prefix) && (path.length === prefix.length || path[prefix.length] === '/');
}

/** The API and the path under its base, when `path` is under one of the API bases. */
function apiOf(path: string): { api: ApiName; relative: string } | undefined {
  for (const api of API_NAMES) {
    const base = API_BASES[api];
    if (path.startsWith(base) && (path.length === base.length || path[base.length] === '/')) return { api, relative: path.slice(base.length) };
  }
  return undefined;
}

function unsupportedContentType(req: IncomingMessage): ApiError {
  return new ApiError({ code: 'COULD_NOT_VALIDATE', message: 'The supplied request contains an invalid document', status: 415 }, {
    cause: { field: 'Content-Type', reason: `unsupported media type "${req.headers['content-type']}"` },
  });
}

/**
 * Builds a context's HTTP app: its slice of the Edge API (from the contract), health and
 * readiness probes, principal verification, body limits and validation, and the envelope
 * for every error, unknown path (404) and wrong verb (405).
 */
export function createServiceApp(opts: ServiceAppOptions): HttpApp {
  const routes = opts.routes ?? routesFor({ owner: opts.owner });
  for (const route of routes) {
    if (!opts.handlers[route.operationId]) throw new Error(`${opts.owner}: no handler for operation ${route.operationId}`);
  }
  const table = new RouteTable(routes);
  const log = logger(opts.owner);

  async function handle(req: ServiceRequest, res: ServerResponse, requestId: string, request: RequestContext): Promise<void> {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (req.method === 'GET' || req.method === 'HEAD') {
      if (path === '/healthz') {
        req.zitiOperation = 'healthz';
        return sendJson(res, { service: opts.owner, status: 'ok' });
      }
      if (path === '/readyz') {
        req.zitiOperation = 'readyz';
        // Not ready from the moment the process began to shut down, whatever the database says.
        const ready = !processShuttingDown() && (opts.ready ? await opts.ready().catch(() => false) : true);
        res.statusCode = ready ? 200 : 503;
        return sendJson(res, { service: opts.owner, ready });
      }
    }
    if (opts.raw && isUnder(path, opts.raw.prefix)) {
      req.zitiOperation = opts.raw.prefix;
      request.operationId = opts.raw.prefix;
      return opts.raw.handle(req, res, requestId);
    }
    const token = req.headers[PRINCIPAL_HEADER];
    const handedOver = handedOverPrincipal(req);
    if (handedOver) req.zitiPrincipal = handedOver;
    else if (typeof token === 'string' && token.length > 0) req.zitiPrincipal = verifyPrincipal(opts.internalSecret, token).principal;
    if (req.zitiPrincipal) request.identityId = req.zitiPrincipal.identityId;

    const target = apiOf(path);
    if (!target) throw ApiError.of('NOT_FOUND');
    const { route, params } = table.match(target.api, req.method ?? 'GET', target.relative || '/');
    const handler = opts.handlers[route.operationId]!;
    req.zitiOperation = route.operationId;
    request.operationId = route.operationId;

    checkAccess(route.access, route.method, req.zitiPrincipal, route.permission);
    assertStorableRequest({ params });
    req.body = await readJsonBody(req);
    const query: HandlerContext['query'] = q < 0 ? {} : parseQueryString(url.slice(q + 1));
    assertStorableRequest({ query, body: req.body });
    let body: unknown = req.body;
    if (route.body) {
      if (hasBody(req) && req.headers['content-type'] !== undefined && !isJsonMediaType(mediaTypeOf(req))) throw unsupportedContentType(req);
      if (body !== undefined) body = validateBody(route.body, body);
      else if (!route.bodyOptional) throw ApiError.field('(root)', 'body in body is required');
    }
    const ctx: HandlerContext = { api: target.api, route, params, query, body, principal: req.zitiPrincipal, requestId, req, res };
    const record = opts.outcomes?.[route.operationId];
    let result: HandlerResult;
    if (!record) result = await handler(ctx);
    else {
      try {
        result = await handler(ctx);
      } catch (err) {
        record(ctx, err);
        throw err;
      }
      record(ctx);
    }
    if (res.headersSent || res.writableEnded) return;
    const r = result ?? {};
    res.statusCode = r.status ?? route.success.status;
    for (const [k, v] of Object.entries(r.headers ?? {})) res.setHeader(k, headerValue(v));
    if (r.raw !== undefined) sendBody(res, r.raw, r.contentType ?? 'application/octet-stream');
    else sendJson(res, r.body ?? { data: {}, meta: {} });
  }

  return (req: ServiceRequest, res: ServerResponse) => {
    const fromGateway = req.headers[REQUEST_ID_HEADER];
    const requestId = typeof fromGateway === 'string' && fromGateway.length > 0 ? fromGateway : shortId();
    req.zitiRequestId = requestId;
    observeHttpRequest(res, opts.owner, () => req.zitiOperation);
    // Everything logged while serving it carries the request's ids; its own line is at debug (the gateway's is the access log).
    const request: RequestContext = { requestId };
    if (log.isLevelEnabled('debug')) {
      const path = pathOf(req.url);
      logAccess(log, 'debug', res, request, { method: methodOf(req), path, api: apiOf(path)?.api });
    }
    runWithRequest(request, () => handle(req, res, requestId, request).catch((err: unknown) => sendError(res, err, requestId, log)));
  };
}
