import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger, RequestContext } from '@ziti/log';

/** What the access line of a request says besides the request context's ids. */
export interface AccessLine {
  method: string;
  /** The path as the caller sent it, without the query string (query values can hold secrets: enrollment tokens). */
  path: string;
  /** The Edge API the path is under (`client`, `management`, `fabric`), once known. */
  api?: string;
}

/** `url` without its query string. */
export function pathOf(url: string | undefined): string {
  const u = url ?? '/';
  const q = u.indexOf('?');
  return q < 0 ? u : u.slice(0, q);
}

/**
 * Writes one access line for a request once its answer is finished or its connection closed:
 * `requestId`, `method`, `path`, `operationId` (when the route matched), `identityId` (when the
 * caller was authenticated), `status`, `latencyMs`, `api`, and `aborted` when the connection
 * closed before the answer was complete. The ids are read from `request` at that moment, so what
 * was learnt while serving counts. At `level`, or at error for a 5xx when `level` is info (the
 * gateway); contexts log theirs at debug. Nothing is registered when neither level is enabled.
 */
export function logAccess(
  log: Logger,
  level: 'info' | 'debug',
  res: ServerResponse,
  request: RequestContext,
  line: AccessLine,
  startedAt = performance.now(),
): void {
  if (!log.isLevelEnabled(level) && !(level === 'info' && log.isLevelEnabled('error'))) return;
  res.once('close', () => {
    const status = res.statusCode;
    const fields: Record<string, unknown> = { requestId: request.requestId, method: line.method, path: line.path };
    if (request.operationId !== undefined) fields.operationId = request.operationId;
    if (request.identityId !== undefined) fields.identityId = request.identityId;
    fields.status = status;
    fields.latencyMs = Math.round((performance.now() - startedAt) * 10) / 10;
    if (line.api !== undefined) fields.api = line.api;
    if (!res.writableFinished) fields.aborted = true;
    if (level === 'info' && status >= 500) log.error(fields, 'request finished');
    else log[level](fields, 'request finished');
  });
}

/** The method of a request, for its access line. */
export function methodOf(req: IncomingMessage): string {
  return req.method ?? 'GET';
}
