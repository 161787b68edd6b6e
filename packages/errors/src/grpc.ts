import { Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { ApiError, type ApiErrorCause, toApiError } from './api-error.js';

const CODE_KEY = 'ziti-error-code';
const CAUSE_KEY = 'ziti-error-cause';
const HEADERS_KEY = 'ziti-error-headers';
const STATUS_KEY = 'ziti-error-status';

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

/**
 * Turns any error into a gRPC ServiceError whose trailers carry the OpenZiti code, status,
 * cause and extra headers, so the caller can rebuild the same ApiError (never a bare UNKNOWN).
 */
export function toGrpcError(err: unknown): Partial<ServiceError> {
  const apiErr = toApiError(err);
  const metadata = new Metadata();
  metadata.set(CODE_KEY, apiErr.code);
  metadata.set(STATUS_KEY, String(apiErr.status));
  if (apiErr.cause !== undefined) metadata.set(CAUSE_KEY, JSON.stringify(apiErr.cause));
  if (Object.keys(apiErr.headers).length > 0) metadata.set(HEADERS_KEY, JSON.stringify(apiErr.headers));
  return { code: grpcStatusFor(apiErr.status), details: apiErr.message, metadata };
}

/** The inverse of toGrpcError, for the calling side. Transport failures become 503 TIMEOUT-free UNHANDLED. */
export function fromGrpcError(err: unknown): ApiError {
  const se = err as Partial<ServiceError>;
  const md = se?.metadata;
  const code = md?.get(CODE_KEY)[0];
  if (typeof code === 'string') {
    const causeRaw = md!.get(CAUSE_KEY)[0];
    const headersRaw = md!.get(HEADERS_KEY)[0];
    const statusRaw = md!.get(STATUS_KEY)[0];
    return ApiError.fromCode(code, {
      message: se.details || undefined,
      cause: typeof causeRaw === 'string' ? (JSON.parse(causeRaw) as ApiErrorCause) : undefined,
      headers: typeof headersRaw === 'string' ? (JSON.parse(headersRaw) as Record<string, string>) : undefined,
      status: typeof statusRaw === 'string' ? Number(statusRaw) : undefined,
    });
  }
  if (se?.code === GrpcStatus.UNAVAILABLE || se?.code === GrpcStatus.DEADLINE_EXCEEDED) {
    return ApiError.of('TIMEOUT', { cause: { code: 'UNHANDLED', message: se.details ?? 'upstream unavailable' } });
  }
  return ApiError.unhandled(err);
}
