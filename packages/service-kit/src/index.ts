// Process plumbing shared by every service: HTTP and gRPC listeners, the health service,
// graceful shutdown and environment parsing. No domain logic.
export { type HttpListener, listenHttp } from './http.js';
export { type GrpcServiceBinding, type GrpcListener, healthService, startGrpcServer } from './grpc.js';
export {
  DEFAULT_DEPENDENCY_WAIT_SECONDS,
  type LifecycleConfig,
  boolEnv,
  eventNamespacesEnabled,
  guardProcess,
  intEnv,
  lifecycleConfig,
  onShutdown,
  requireEnv,
  servePending,
  waitForDependency,
} from './process.js';
export { type ContextProcess, type ContextProcessConfig, runContextProcess } from './context-process.js';
export { REQUEST_ID_METADATA, grpcClient, inProcessEnabled, localHttpApp, registerGrpcServer, registerHttpApp } from './in-process.js';
export { MAX_HOLD_SECONDS, type MaintenancePort, maintenanceService } from './maintenance.js';
export {
  Findings,
  MAX_INTEGRITY_RESULTS,
  REFERENCE_GRACE_SECONDS,
  REFERENCE_KIND_NAMES,
  REFERENCE_OWNERS,
  OUTBOX_STUCK_SECONDS,
  findingsFor,
  integrityService,
  integrityPageSize,
  outboxIntegrityCheck,
  referenceIntegrity,
  checkOutbox,
  listReferenceIds,
  repairReferenceRows,
  type IntegrityHandlers,
  type IntegritySql,
  type ReferenceColumn,
} from './integrity.js';
