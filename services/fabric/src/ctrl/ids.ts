/** Content types and header ids of OpenZiti's control channel (reference §1.4, §2) this context uses. */
export const CT = {
  Result: 2,
  Fault: 1004,
  Route: 1005,
  Unroute: 1006,
  Metrics: 1007,
  RouteResult: 1022,
  CircuitConfirmation: 1034,
  RouterLinks: 1035,
  VerifyRouter: 1036,
  RemoveTerminators: 1038,
  PeerStateChanges: 1050,
  RouterInterfacesUpdate: 1052,
  LinkState: 1053,
  Alerts: 1054,
  ServerHello: 20000,
  ClientHello: 20001,
  Error: 20002,
  ApiSessionAdded: 20200,
  ApiSessionUpdated: 20201,
  ApiSessionRemoved: 20202,
  ApiSessionHeartbeat: 20203,
  RequestClientReSync: 20204,
  UpdateTerminatorRequest: 20209,
  UpdateTerminatorResponse: 20210,
  RemoveTerminatorRequest: 20211,
  RemoveTerminatorResponse: 20212,
  ValidateSessions: 20213,
  HealthEvent: 20214,
  CreateTerminatorV2Request: 20216,
  CreateTerminatorV2Response: 20217,
  CreateCircuitV2Request: 20218,
  CreateCircuitV2Response: 20219,
  ConnectEvents: 20415,
  DataState: 20500,
  DataStateChangeSet: 20501,
  SubscribeToDataModel: 20505,
  CurrentIndex: 20506,
} as const;

export const H = {
  ResultSuccess: 2,
  /** Edge: the sync strategy of a full API-session state ("instant") and its chunk state (JSON). */
  SyncStrategy: 1013,
  SyncState: 1014,
  /** Edge Error messages' code (uint32). */
  ErrorCode: 1014,
  RouterDataModel: 1024,
  RouterDataModelIndex: 1025,
  RouterDataModelSubscriptionId: 1026,
  /** Edge Error messages' circuit id. */
  CircuitId: 1026,
  // CreateCircuitV2 request / response (common/ctrl_msg)
  PeerData: 10,
  SessionToken: 11,
  CircuitIdResp: 11,
  Fingerprints: 12,
  AddressResp: 12,
  TerminatorInstanceId: 13,
  TagsResp: 13,
  ApiSessionToken: 14,
  // RouteResult
  RouteAttempt: 1101,
  RouteSuccess: 1102,
  RouteError: 1103,
  RouteErrorCode: 1104,
} as const;

/** OpenZiti's edge error codes: `@ziti/channel`'s. */
export { EdgeErrorCode } from '@ziti/channel';

export const SYNC = {
  NEW: 'SYNC_NEW',
  QUEUED: 'SYNC_QUEUED',
  HELLO: 'SYNC_HELLO',
  HELLO_WAIT: 'SYNC_HELLO_WAIT',
  IN_PROGRESS: 'SYNC_IN_PROGRESS',
  DONE: 'SYNC_DONE',
  UNKNOWN: 'SYNC_UNKNOWN',
  HELLO_TIMEOUT: 'SYNC_HELLO_TIMEOUT',
  ERROR: 'SYNC_ERROR',
} as const;
