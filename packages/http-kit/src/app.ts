import express, { type NextFunction, type Request, type Response } from 'express';
import { type ApiName, type Owner, type RouteDef, expressPath, pathPattern, routesFor } from '@ziti/api-contract';
import { ApiError, errorEnvelope, toApiError } from '@ziti/errors';
import { checkAccess } from './access.js';
import { shortId } from './ids.js';
import { PRINCIPAL_HEADER, REQUEST_ID_HEADER, type RequestPrincipal, verifyPrincipal } from './principal.js';
import { validateBody } from './validate.js';

export const API_BASES: Record<ApiName, string> = {
  client: '/edge/client/v1',
  management: '/edge/management/v1',
};

/** Maximum request body, as the controller's `api.MaxRequestBodySize`. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** What a handler receives: parsed and validated input, the caller, and the raw request. */
export interface HandlerContext<B = any> {
  api: ApiName;
  route: RouteDef;
  params: Record<string, string>;
  query: Record<string, string | string[] | undefined>;
  body: B;
  principal?: RequestPrincipal;
  requestId: string;
  req: Request;
  res: Response;
}

/** What a handler returns; the kit writes it. `body` is sent as JSON unless `raw` is given. */
export interface HandlerResult {
  status?: number;
  body?: unknown;
  raw?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
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
  /** Readiness probe for `/readyz` (database reachable and so on). */
  ready?: () => Promise<boolean>;
}

declare module 'express-serve-static-core' {
  interface Request {
    zitiRequestId?: string;
    zitiPrincipal?: RequestPrincipal;
  }
}

/** Sends an ApiError in the OpenZiti envelope. */
export function sendError(res: Response, err: unknown, requestId: string): void {
  const apiErr = toApiError(err);
  if (apiErr.status >= 500 && apiErr.code === 'UNHANDLED') console.error(`[${requestId}]`, err);
  res.status(apiErr.status);
  for (const [k, v] of Object.entries(apiErr.headers)) res.setHeader(k, v);
  res.json(errorEnvelope(apiErr, requestId));
}

function bodyParserError(err: any): ApiError {
  switch (err?.type) {
    case 'entity.too.large':
      return ApiError.of('REQUEST_ENTITY_TOO_LARGE');
    case 'entity.parse.failed':
      return ApiError.of('COULD_NOT_PARSE_BODY', { cause: { code: 'UNHANDLED', message: String(err.message) } });
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return ApiError.of('COULD_NOT_VALIDATE', { status: 415, cause: { code: 'UNHANDLED', message: String(err.message) } } as never);
    case 'request.aborted':
    case 'stream.not.readable':
      return ApiError.of('COULD_NOT_READ_BODY');
    default:
      return toApiError(err);
  }
}

/**
 * Writes a JSON body. The "unlimited" page size is 2^63-1 on the wire, which a JS number cannot
 * hold exactly (it stringifies as 9223372036854776000); the pagination `limit` is written exactly.
 */
export function sendJson(res: Response, body: unknown): void {
  const text = JSON.stringify(body).replace(/"limit":9223372036854776000\b/g, '"limit":9223372036854775807');
  res.setHeader('content-type', 'application/json');
  res.send(text);
}

/** Request id middleware: the gateway's id when present, else a fresh shortid. */
export function requestIdMiddleware(req: Request, _res: Response, next: NextFunction): void {
  const fromGateway = req.headers[REQUEST_ID_HEADER];
  req.zitiRequestId = typeof fromGateway === 'string' && fromGateway.length > 0 ? fromGateway : shortId();
  next();
}

/** JSON body parser with the 1 MiB limit and OpenZiti error mapping. */
export function jsonBody() {
  const parser = express.json({ limit: MAX_BODY_BYTES, type: ['application/json', 'application/*+json'], strict: false });
  return (req: Request, res: Response, next: NextFunction) =>
    parser(req, res, (err?: unknown) => (err ? next(bodyParserError(err)) : next()));
}

function isJsonContentType(req: Request): boolean {
  const ct = req.headers['content-type'];
  return !ct || /^application\/([a-z.+-]*\+)?json\b/i.test(ct);
}

function hasBody(req: Request): boolean {
  const len = req.headers['content-length'];
  return (len !== undefined && len !== '0') || req.headers['transfer-encoding'] !== undefined;
}

function mountRoute(app: express.Express, api: ApiName, route: RouteDef, handler: Handler): void {
  const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
  app[method](API_BASES[api] + expressPath(route.path), async (req: Request, res: Response, next: NextFunction) => {
    const requestId = req.zitiRequestId!;
    try {
      checkAccess(route.access, route.method, req.zitiPrincipal, route.permission);
      let body: unknown = req.body;
      if (route.body) {
        if (hasBody(req) && !isJsonContentType(req)) {
          throw new ApiError({ code: 'COULD_NOT_VALIDATE', message: 'The supplied request contains an invalid document', status: 415 }, {
            cause: { field: 'Content-Type', reason: `unsupported media type "${req.headers['content-type']}"` },
          });
        }
        if (body !== undefined) body = validateBody(route.body, body);
        else if (!route.bodyOptional) throw ApiError.field('(root)', 'body in body is required');
      }
      const result = await handler({
        api,
        route,
        params: req.params as Record<string, string>,
        query: req.query as HandlerContext['query'],
        body,
        principal: req.zitiPrincipal,
        requestId,
        req,
        res,
      });
      if (res.headersSent) return;
      const r = result ?? {};
      res.status(r.status ?? route.success.status);
      for (const [k, v] of Object.entries(r.headers ?? {})) res.setHeader(k, v);
      if (r.raw !== undefined) {
        res.setHeader('content-type', r.contentType ?? 'application/octet-stream');
        res.send(r.raw);
      } else {
        sendJson(res, r.body ?? { data: {}, meta: {} });
      }
    } catch (err) {
      next(err);
    }
  });
}

/**
 * Builds a context's HTTP app: its slice of the Edge API (from the contract), health and
 * readiness probes, principal verification, body limits and validation, and the envelope
 * for every error, unknown path (404) and wrong verb (405).
 */
export function createServiceApp(opts: ServiceAppOptions): express.Express {
  const routes = opts.routes ?? routesFor({ owner: opts.owner });
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'extended');
  app.use(requestIdMiddleware);

  app.get('/healthz', (_req, res) => {
    res.json({ service: opts.owner, status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const ready = opts.ready ? await opts.ready().catch(() => false) : true;
    res.status(ready ? 200 : 503).json({ service: opts.owner, ready });
  });

  app.use((req: Request, _res: Response, next: NextFunction) => {
    const token = req.headers[PRINCIPAL_HEADER];
    if (typeof token === 'string' && token.length > 0) {
      try {
        req.zitiPrincipal = verifyPrincipal(opts.internalSecret, token).principal;
      } catch (err) {
        return next(err);
      }
    }
    next();
  });
  app.use(jsonBody());

  for (const route of routes) {
    const handler = opts.handlers[route.operationId];
    if (!handler) throw new Error(`${opts.owner}: no handler for operation ${route.operationId}`);
    for (const api of route.apis) mountRoute(app, api, route, handler);
  }

  const patterns = routes.flatMap((r) => r.apis.map((api) => ({ re: pathPattern(API_BASES[api] + r.path), method: r.method })));
  app.use((req: Request, _res: Response, next: NextFunction) => {
    const known = patterns.some((p) => p.re.test(req.path));
    next(known ? ApiError.of('METHOD_NOT_ALLOWED') : ApiError.of('NOT_FOUND'));
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    sendError(res, err, req.zitiRequestId ?? shortId());
  });
  return app;
}
