export { shortId, uuidToken } from './ids.js';
export {
  PRINCIPAL_HEADER,
  REQUEST_ID_HEADER,
  INTERNAL_HEADER_PREFIX,
  type RequestPrincipal,
  type PrincipalTrace,
  activeTrace,
  signPrincipal,
  verifyPrincipal,
} from './principal.js';
export { CLIENT_CERT_HEADER, signClientCertChain, verifyClientCertChain, clientCertChainOf } from './client-cert.js';
export { type Caller, type IdentityPrivilege, checkAccess, isAdminCaller, isPrivilegedIdentity, mayTouchIdentity, mayUseEnrollmentSecrets } from './access.js';
export { type AccessLine, logAccess, methodOf, pathOf } from './access-log.js';
export { validateBody } from './validate.js';
export { nfc, normalizeName } from './names.js';
export { assertStorableRequest, firstUnstorableText, isStorableText, unstorableTextError } from './text.js';
export { headerValue, quotedHeaderParam } from './header-value.js';
export {
  API_BASES,
  type Handler,
  type HandlerContext,
  type HandlerResult,
  type OutcomeRecorder,
  type RawHandler,
  type ServiceAppOptions,
  type ServiceRequest,
  createServiceApp,
  outcomeCode,
} from './app.js';
export {
  type HttpApp,
  MAX_BODY_BYTES,
  answerClientError,
  MAX_JSON_DEPTH,
  jsonNestsDeeperThan,
  attachBufferedBody,
  attachPrincipal,
  handedOverPrincipal,
  hasBody,
  isJsonMediaType,
  jsonText,
  mediaTypeOf,
  readBody,
  readJsonBody,
  sendBody,
  sendError,
  sendJson,
} from './http.js';
export { RouteTable, type RouteMatch } from './route-table.js';
export * from './query/index.js';
export {
  type CachedPrincipal,
  type RevocationMarkers,
  type RevocationType,
  MAX_PRINCIPAL_CACHE_TTL_SECONDS,
  PRINCIPAL_GENERATION_TTL_SECONDS,
  isCurrentGeneration,
  isRevokedByMarkers,
  principalGenerationKey,
  revocationMarkerKey,
  tokenHash,
  principalCacheEntry,
  principalCacheKey,
  principalCacheKeyFromHash,
  principalCacheTtl,
} from './principal-cache.js';
export { DEFAULT_SHUTDOWN_GRACE_SECONDS, beginProcessShutdown, processShuttingDown, setShutdownGraceMs, shutdownGraceMs } from './lifecycle.js';
export { type Drain, createDrain, sendUnavailable } from './drain.js';
export {
  type AuthOutcome,
  type SessionCreated,
  AUTH_OUTCOME_HEADER,
  RESPONSE_EVENT_HEADERS,
  SESSION_CREATED_HEADER,
  decodeAuthOutcome,
  decodeSessionCreated,
  encodeResponseEvent,
} from './response-events.js';
