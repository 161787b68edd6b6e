// Process plumbing shared by every service: HTTP and gRPC listeners, the health service,
// graceful shutdown and environment parsing. No domain logic.
export { type HttpListener, fromGateway, gatewayOnly, internalServerOptions, listenHttp } from './http.js';
export { type GrpcServiceBinding, type GrpcListener, callerOf, healthService, startGrpcServer } from './grpc.js';
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
  requireSecret,
  optionalSecret,
  MIN_SECRET_LENGTH,
  servePending,
  waitForDependency,
} from './process.js';
export { type ContextProcess, runContextProcess } from './context-process.js';
export { IN_PROCESS_CALLER, REQUEST_ID_METADATA, grpcClient, inProcessEnabled, internalChannelCredentials, internalChannelOptions, localHttpApp, registerGrpcServer, registerHttpApp } from './in-process.js';
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
export { type ContextConfig, contextConfig, peerAddress } from './context-config.js';
export { CONTEXT_NAMES, type ContextName, InternalCredentials, InternalTlsError, type InternalTlsMaterial, checkInternalMaterial, expectServer, holdInternalCredentials, holdsInternalCredentials, internalCredentials, isContextName, peerContext, readInternalTlsDir, watchInternalTlsDir } from './internal-tls.js';
export { type InternalPki, createInternalIdentities, createInternalPki, holdProcessIdentities, writeInternalPki } from './internal-pki.js';
export { INTERNAL_RPC_CALLERS, INTERNAL_SERVICE_OWNERS, mayCall } from './internal-acl.js';
export { type InternalResponse, internalFetch, internalRequest, internalRpc, internalTestClient } from './internal-client.js';
export { type ContextDeps, type ContextScope, type ContextServing, type RunningContext, startContext } from './context.js';
export { type Address, type LazyClient, type Unary, lazyGrpcClient } from './lazy-client.js';
