import { Errors, type ErrorCode, type ErrorDef, lookupError } from './catalogue.js';

/** A field-level validation failure, rendered as `cause: {field, reason, value}`. */
export interface FieldErrorCause {
  field: string;
  reason: string;
  value?: unknown;
}

/** A nested cause as rendered on the wire (`allOf(apiFieldError, apiError)`). */
export interface ApiErrorCause {
  code?: string;
  message?: string;
  field?: string;
  reason?: string;
  value?: unknown;
  data?: unknown;
  cause?: ApiErrorCause;
}

/**
 * The one error type of the project. Thrown by domain code, rendered by the HTTP kit into the
 * OpenZiti error envelope, and carried across gRPC with its code intact (see grpc.ts).
 */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  override readonly cause?: ApiErrorCause;
  readonly headers: Record<string, string>;

  constructor(def: ErrorDef, opts: { cause?: ApiErrorCause; message?: string; headers?: Record<string, string>; status?: number } = {}) {
    super(opts.message ?? def.message);
    this.name = 'ApiError';
    this.code = def.code;
    this.status = opts.status ?? def.status;
    this.cause = opts.cause;
    this.headers = opts.headers ?? {};
  }

  static of(code: ErrorCode, opts: { cause?: ApiErrorCause; message?: string; headers?: Record<string, string> } = {}): ApiError {
    return new ApiError(Errors[code], opts);
  }

  /** Rebuilds an error from a code received from elsewhere (gRPC trailers, another service). */
  static fromCode(code: string, opts: { cause?: ApiErrorCause; message?: string; headers?: Record<string, string>; status?: number } = {}): ApiError {
    return new ApiError(lookupError(code) ?? Errors.UNHANDLED, opts);
  }

  static notFound(detail?: string): ApiError {
    return ApiError.of('NOT_FOUND', detail ? { cause: { code: 'UNHANDLED', message: detail } } : {});
  }

  /** A field error; OpenZiti renders INVALID_FIELD as 400 COULD_NOT_VALIDATE with `cause.field`. */
  static field(field: string, reason: string, value?: unknown): ApiError {
    return ApiError.of('COULD_NOT_VALIDATE', { cause: { field, reason, value: renderValue(value) } });
  }

  static unhandled(err: unknown): ApiError {
    const message = err instanceof Error ? err.message : String(err);
    return ApiError.of('UNHANDLED', { cause: { code: 'UNHANDLED', message } });
  }
}

/** Go renders field error values with `%v`; the wire carries them as strings. */
function renderValue(value: unknown): unknown {
  if (value === undefined) return undefined;
  if (value === null) return '<nil>';
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return `[${value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(' ')}]`;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}

/** Any thrown value as an ApiError (unknown errors become 500 UNHANDLED). */
export function toApiError(err: unknown): ApiError {
  return isApiError(err) ? err : ApiError.unhandled(err);
}
