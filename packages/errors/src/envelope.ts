import type { ApiError, ApiErrorCause } from './api-error.js';
import { Errors, lookupError } from './catalogue.js';

/** `meta` of every error envelope. */
export const ERROR_META = Object.freeze({ apiEnrollmentVersion: '0.0.1', apiVersion: '0.0.1' });

export interface Pagination {
  limit: number;
  offset: number;
  totalCount: number;
}

export interface ErrorEnvelope {
  error: { code: string; message: string; requestId: string; cause?: ApiErrorCause };
  meta: typeof ERROR_META;
}

/**
 * `{error:{code,message,requestId[,cause]}, meta:{apiEnrollmentVersion, apiVersion}}`.
 * A server error (5xx) says only its code, the catalogue's message for it and the request id: its
 * cause and any message built at run time (driver errors, addresses, paths) belong in the log,
 * which has them under the same request id.
 */
export function errorEnvelope(err: ApiError, requestId: string): ErrorEnvelope {
  if (err.status >= 500) {
    return { error: { code: err.code, message: (lookupError(err.code) ?? Errors.UNHANDLED).message, requestId }, meta: { ...ERROR_META } };
  }
  const error: ErrorEnvelope['error'] = { code: err.code, message: err.message, requestId };
  if (err.cause !== undefined) error.cause = err.cause;
  return { error, meta: { ...ERROR_META } };
}

/** Detail and other single-object responses: `{data, meta:{}}`. */
export function dataEnvelope<T>(data: T): { data: T; meta: Record<string, never> } {
  return { data, meta: {} };
}

/** The empty success of update, patch, delete and similar: `{data:{}, meta:{}}`. */
export function emptyEnvelope(): { data: Record<string, never>; meta: Record<string, never> } {
  return { data: {}, meta: {} };
}

/** List responses. `filterableFields` is omitted when empty, as the controller's omitempty does. */
export function listEnvelope<T>(data: T[], pagination: Pagination, filterableFields?: readonly string[]) {
  const meta: { filterableFields?: string[]; pagination: Pagination } = { pagination };
  if (filterableFields && filterableFields.length > 0) meta.filterableFields = [...filterableFields];
  return { data, meta };
}

/** 201 create: `{data:{_links:{self:{href:"./<plural>/<id>"}}, id}, meta:{}}`. */
export function createdEnvelope(plural: string, id: string) {
  return { data: { _links: { self: { href: `./${plural}/${id}` } }, id }, meta: {} };
}

/** RFC 3339 with milliseconds, UTC, as go-openapi's strfmt.DateTime renders it. */
export function formatTimestamp(d: Date | string | number): string {
  return new Date(d).toISOString();
}
