import { Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { ApiError, type ApiErrorCause, toApiError } from './api-error.js';
import { Errors, lookupError } from './catalogue.js';

const CODE_KEY = 'ziti-error-code';
const STATUS_KEY = 'ziti-error-status';
// Binary (`-bin`) entries: any text is legal there (a text entry must be printable ASCII, and
// grpc-js throws on anything else, e.g. a driver message with a NUL or a non-ASCII name).
const CAUSE_KEY = 'ziti-error-cause-bin';
const HEADERS_KEY = 'ziti-error-headers-bin';
const MESSAGE_KEY = 'ziti-error-message-bin';
/** The catalogue's codes are identifiers; anything else is not put into a text entry. */
const SAFE_CODE = /^[A-Za-z0-9_]{1,64}$/;

function grpcStatusFor(httpStatus: number): GrpcStatus {
  switch (httpStatus) {
    case 400: return GrpcStatus.INVALID_ARGUMENT;
    case 401: return GrpcStatus.UNAUTHENTICATED;
    case 403: return GrpcStatus.PERMISSION_DENIED;
    case 404: return GrpcStatus.NOT_FOUND;
    case 409: return GrpcStatus.ALREADY_EXISTS;
    case 429: return GrpcStatus.RESOURCE_EXHAUSTED;
    case 503: return GrpcStatus.UNAVAILABLE;
    default: return httpStatus >= 500 ? GrpcStatus.INTERNAL : GrpcStatus.FAILED_PRECONDITION;
  }
}

const utf8 = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8');

/**
 * Turns any error into a gRPC ServiceError whose trailers carry the OpenZiti code, status,
 * message, cause and extra headers, so the caller can rebuild the same ApiError (never a bare
 * UNKNOWN). Never throws: whatever text the error holds travels in binary entries, and
 * `details` is the catalogue's ASCII message.
 */
export function toGrpcError(err: unknown): Partial<ServiceError> {
  let apiErr: ApiError;
  try {
    apiErr = toApiError(err);
  } catch {
    apiErr = ApiError.of('UNHANDLED');
  }
  const code = SAFE_CODE.test(apiErr.code) ? apiErr.code : 'UNHANDLED';
  const status = Number.isInteger(apiErr.status) ? apiErr.status : 500;
  const metadata = new Metadata();
  metadata.set(CODE_KEY, code);
  metadata.set(STATUS_KEY, String(status));
  try {
    metadata.set(MESSAGE_KEY, utf8(apiErr.message));
    if (apiErr.cause !== undefined) metadata.set(CAUSE_KEY, utf8(apiErr.cause));
    if (Object.keys(apiErr.headers).length > 0) metadata.set(HEADERS_KEY, utf8(apiErr.headers));
  } catch {
    // A cause that cannot be serialised (a cycle, a BigInt) travels without it.
    metadata.remove(CAUSE_KEY);
    metadata.remove(HEADERS_KEY);
  }
  return { code: grpcStatusFor(status), details: (lookupError(code) ?? Errors.UNHANDLED).message, metadata };
}

/** A binary entry's JSON, or undefined when absent or unreadable. */
function jsonEntry<T>(md: Metadata, key: string): T | undefined {
  const raw = md.get(key)[0];
  if (!Buffer.isBuffer(raw)) return undefined;
  try {
    return JSON.parse(raw.toString('utf8')) as T;
  } catch {
    return undefined;
  }
}

/**
 * The inverse of toGrpcError, for the calling side. A call that never reached a server
 * (UNAVAILABLE without a ziti error: refused, reset, no address) becomes 503
 * SERVICE_UNAVAILABLE; one whose deadline passed while a server had it, 503 TIMEOUT.
 */
export function fromGrpcError(err: unknown): ApiError {
  const se = err as Partial<ServiceError>;
  const md = se?.metadata;
  const code = md?.get(CODE_KEY)[0];
  if (md && typeof code === 'string') {
    const message = jsonEntry<unknown>(md, MESSAGE_KEY);
    const statusRaw = md.get(STATUS_KEY)[0];
    return ApiError.fromCode(code, {
      message: typeof message === 'string' && message !== '' ? message : se.details || undefined,
      cause: jsonEntry<ApiErrorCause>(md, CAUSE_KEY),
      headers: jsonEntry<Record<string, string>>(md, HEADERS_KEY),
      status: typeof statusRaw === 'string' && /^\d{3}$/.test(statusRaw) ? Number(statusRaw) : undefined,
    });
  }
  if (se?.code === GrpcStatus.UNAVAILABLE) return ApiError.unavailable('context', err);
  if (se?.code === GrpcStatus.DEADLINE_EXCEEDED) {
    return ApiError.of('TIMEOUT', { cause: { code: 'UNHANDLED', message: se.details ?? 'deadline exceeded' } });
  }
  return toApiError(err);
}
