import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What is known about the request being served: set where a request enters a process (the
 * gateway's listener, a context's HTTP app, a gRPC handler) and read by every log call made while
 * serving it, so their lines carry `requestId` (and `operationId`, `identityId` once known)
 * without passing them around. The gateway fills `operationId` and `identityId` in as it learns
 * them: the object is shared by everything that runs for the request.
 */
export interface RequestContext {
  requestId: string;
  operationId?: string;
  identityId?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs `fn` with `context` as the current request (for `fn` and everything it starts). */
export function runWithRequest<T>(context: RequestContext, fn: () => T): T {
  return storage.run(context, fn);
}

/** The request being served, if any. */
export function currentRequest(): RequestContext | undefined {
  return storage.getStore();
}

/** The current request's id, if any: what gRPC metadata and change events carry across processes. */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

/**
 * A request id that came from elsewhere (gRPC metadata, an event), fit to be logged: at most 64
 * characters of `[A-Za-z0-9._-]`, else undefined. A peer's text never reaches the log unchecked.
 */
export function acceptRequestId(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= 64 && /^[A-Za-z0-9._-]+$/.test(value) ? value : undefined;
}
