import { Errors, type ErrorCode, type ErrorDef, lookupError } from './catalogue.js';
import { type Dependency, describeFailure, unavailableDependency } from './dependency.js';

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
  /** Set when this answers a dependency found down (`ApiError.unavailable`): reported once per outage, not logged per request. */
  dependency?: Dependency;

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

  /** 503 SERVICE_UNAVAILABLE for an operation that failed because `dependency` is down; the cause stays in the log. */
  static unavailable(dependency: Dependency, err: unknown): ApiError {
    const apiErr = ApiError.of('SERVICE_UNAVAILABLE', { cause: { code: 'UNHANDLED', message: `${dependency} unavailable: ${describeFailure(err)}` } });
    apiErr.dependency = dependency;
    return apiErr;
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

/**
 * Any thrown value as an ApiError: one that says a dependency is down (`unavailableDependency`)
 * becomes 503 SERVICE_UNAVAILABLE, any other unknown error 500 UNHANDLED.
 */
export function toApiError(err: unknown): ApiError {
  if (isApiError(err)) return err;
  const dependency = unavailableDependency(err);
  return dependency ? ApiError.unavailable(dependency, err) : ApiError.unhandled(err);
}
