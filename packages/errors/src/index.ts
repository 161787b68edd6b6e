export { Errors, type ErrorCode, type ErrorDef, lookupError } from './catalogue.js';
export { ApiError, type ApiErrorCause, type FieldErrorCause, isApiError, toApiError } from './api-error.js';
export {
  ERROR_META,
  type ErrorEnvelope,
  type Pagination,
  errorEnvelope,
  dataEnvelope,
  emptyEnvelope,
  listEnvelope,
  createdEnvelope,
  formatTimestamp,
} from './envelope.js';
export { toGrpcError, fromGrpcError } from './grpc.js';
export { type Dependency, DependencyMonitor, dependencies, describeFailure, unavailableDependency } from './dependency.js';
