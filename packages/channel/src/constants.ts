// Numbers of the OpenZiti router control plane (openziti/channel v4.3.11, openziti/ziti v2.0.3).
// The full enums of the protobuf files are also generated (`ctrlPb.ContentType`, `edgeCtrlPb.ContentType`).

/** ALPN protocol a router offers on the control channel. */
export const CTRL_ALPN = 'ziti-ctrl';
/** Hello header 7 (`Type`) of a router's first control underlay (`common/ctrlchan/channel.go`). */
export const CTRL_CHANNEL_TYPE_DEFAULT = 'ctrl.default';
export const CTRL_CHANNEL_TYPE_HIGH = 'ctrl.high';
/** Sequence of the hello and of its result (`channel.go` HelloSequence). */
export const HELLO_SEQUENCE = -1;

/** Channel-level content types (`openziti/channel:messages.go`). */
export const ContentType = {
  Hello: 0,
  Ping: 1,
  Result: 2,
  Latency: 3,
  LatencyResponse: 4,
  Heartbeat: 5,
  Raw: 6,
} as const;

/** Channel headers (`openziti/channel:message.go`). 128–255 are reflected into replies. */
export const Header = {
  ConnectionId: 0,
  ReplyFor: 1,
  ResultSuccess: 2,
  HelloRouterAdvertisements: 3,
  HelloVersion: 4,
  Heartbeat: 5,
  HeartbeatResponse: 6,
  Type: 7,
  Id: 8,
  IsGrouped: 9,
  GroupSecret: 10,
  IsFirstGroupConnection: 11,
  UnderlayType: 12,
  HelloRejectClass: 13,
  Reflected: 128,
} as const;
export const REFLECTED_HEADER_MIN = 128;
export const REFLECTED_HEADER_MAX = 255;

/** Fabric control content types (`ctrl_pb.ContentType`, plus the header-only ones of `common/ctrl_msg`). */
export const CtrlContentType = {
  CircuitRequest: 1000,
  CircuitSuccess: 1001,
  Fault: 1004,
  Route: 1005,
  Unroute: 1006,
  Metrics: 1007,
  TogglePipeTracesRequest: 1008,
  TraceEvent: 1010,
  CreateTerminatorRequest: 1011,
  RemoveTerminatorRequest: 1012,
  InspectRequest: 1013,
  InspectResponse: 1014,
  CircuitFailed: 1016,
  ValidateTerminatorsRequest: 1017,
  UpdateTerminatorRequest: 1018,
  Settings: 1020,
  RouteResult: 1022,
  CircuitConfirmation: 1034,
  RouterLinks: 1035,
  VerifyRouter: 1036,
  UpdateCtrlAddresses: 1037,
  RemoveTerminatorsRequest: 1038,
  QuiesceRouterRequest: 1039,
  DequiesceRouterRequest: 1040,
  ValidateTerminatorsV2Request: 1041,
  ValidateTerminatorsV2Response: 1042,
  DecommissionRouterRequest: 1043,
  PeerStateChange: 1050,
  UpdateClusterLeader: 1051,
  RouterInterfacesUpdate: 1052,
  LinkState: 1053,
  Alerts: 1054,
  RequestClusterMembers: 1055,
} as const;

/** Fabric control headers: the hello's (`ctrl_pb.ControlHeaders`) and the 1.x hello's legacy ids. */
export const CtrlHeader = {
  Listeners: 1000,
  RouterMetadata: 1001,
  Capabilities: 1002,
  CtrlChanListeners: 1003,
  LegacyListeners: 10,
  LegacyRouterMetadata: 11,
  LegacyCapabilities: 12,
} as const;

/** Headers of the header-only messages of `common/ctrl_msg/messages.go`. */
export const CtrlMsgHeader = {
  CircuitSuccessAddress: 1100,
  RouteResultAttempt: 1101,
  RouteResultSuccess: 1102,
  RouteResultError: 1103,
  RouteResultErrorCode: 1104,
  TerminatorLocalAddress: 1110,
  TerminatorRemoteAddress: 1111,
  InitiatorLocalAddress: 1112,
  InitiatorRemoteAddress: 1113,
  XtStickinessToken: 1114,
  DialerIdentityId: 1115,
  DialerIdentityName: 1116,
  /** Peer data (`map<uint32,bytes>`) of CreateCircuitV2/V3 requests and responses. */
  CreateCircuitPeerData: 10,
  CreateCircuitReqSessionToken: 11,
  CreateCircuitReqFingerprints: 12,
  CreateCircuitReqTerminatorInstanceId: 13,
  CreateCircuitReqApiSessionToken: 14,
  CreateCircuitV3ReqIdentityId: 15,
  CreateCircuitV3ReqServiceId: 16,
  CreateCircuitV3ReqCircuitId: 17,
  CreateCircuitRespCircuitId: 11,
  CreateCircuitRespAddress: 12,
  CreateCircuitRespTags: 13,
  ResultErrorCode: 10,
} as const;

/** RouteResult error codes (header 1104, one byte). */
export const RouteErrorCode = {
  Generic: 0,
  InvalidTerminator: 1,
  MisconfiguredTerminator: 2,
  DialTimedOut: 3,
  ConnectionRefused: 4,
  RejectedByApplication: 5,
  DnsResolutionFailed: 6,
  PortNotAllowed: 7,
  InvalidLinkDestination: 8,
  ResourcesNotAvailable: 9,
} as const;

/** Edge control content types (`edge_ctrl_pb.ContentType`). */
export const EdgeContentType = {
  ServerHello: 20000,
  ClientHello: 20001,
  Error: 20002,
  SessionRemoved: 20102,
  ApiSessionAdded: 20200,
  ApiSessionUpdated: 20201,
  ApiSessionRemoved: 20202,
  ApiSessionHeartbeat: 20203,
  RequestClientReSync: 20204,
  CreateCircuitRequest: 20205,
  CreateCircuitResponse: 20206,
  UpdateTerminatorRequest: 20209,
  UpdateTerminatorResponse: 20210,
  RemoveTerminatorRequest: 20211,
  RemoveTerminatorResponse: 20212,
  ValidateSessionsRequest: 20213,
  HealthEvent: 20214,
  CreateTerminatorV2Request: 20216,
  CreateTerminatorV2Response: 20217,
  CreateCircuitV2Request: 20218,
  CreateCircuitV2Response: 20219,
  CreateTunnelCircuitV2Request: 20220,
  CreateTunnelCircuitV2Response: 20221,
  CreateCircuitV3Request: 20222,
  CreateCircuitV3Response: 20223,
  Enroll: 20300,
  EnrollmentCertsResponse: 20301,
  EnrollmentExtendRouterRequest: 20302,
  EnrollmentExtendRouterVerifyRequest: 20303,
  ConnectEvents: 20415,
  DataState: 20500,
  DataStateChangeSet: 20501,
  UpdateToken: 20502,
  ValidateDataStateRequest: 20503,
  ValidateDataStateResponse: 20504,
  SubscribeToDataModelRequest: 20505,
  CurrentIndexMessage: 20506,
} as const;

/**
 * Edge headers. Some ids mean different things on different messages: 1014 is the sync state
 * (JSON) on ApiSessionAdded and the error code (uint32) on Error 20002; 1026 is the RDM
 * subscription id on RDM messages and the circuit id on Error 20002.
 */
export const EdgeHeader = {
  /** `SessionToken` peer-data/edge header id (SDK protocol). */
  SessionToken: 1002,
  /** `PublicKey` peer-data key (SDK protocol): the dialer's public key, required for encrypted services. */
  PublicKey: 1003,
  SyncStrategyType: 1013,
  SyncStrategyState: 1014,
  SyncStrategyLastIndex: 1015,
  ErrorCode: 1014,
  TerminatorId: 1022,
  CheckPassed: 1023,
  RouterDataModel: 1024,
  RouterDataModelIndex: 1025,
  RouterDataModelSubscriptionId: 1026,
  CircuitId: 1026,
} as const;

/** Error codes of Error 20002 (header 1014), sdk-golang `edge` package. */
export const EdgeErrorCode = {
  Internal: 1,
  InvalidApiSession: 2,
  InvalidSession: 3,
  WrongSessionType: 4,
  InvalidEdgeRouterForSession: 5,
  InvalidService: 6,
  TunnelingNotEnabled: 7,
  InvalidTerminator: 8,
  InvalidPrecedence: 9,
  InvalidCost: 10,
  EncryptionDataMissing: 11,
} as const;

/** Controller capability bits (`common/capabilities/consts.go`). */
export const ControllerCapability = {
  CreateTerminatorV2: 1,
  SingleRouterLinkSource: 2,
  CreateCircuitV2: 3,
  RouterDataModel: 4,
  GroupedCtrlChan: 5,
  SupportsJWTLegacySessions: 6,
} as const;

/** What a single-socket controller advertises: every bit but GroupedCtrlChan (mask 0x5E). */
export const SINGLE_SOCKET_CONTROLLER_CAPABILITIES: readonly number[] = [1, 2, 3, 4, 6];

/** Router capability bits (hello header 1002). RouterDataModel (-2) is bit 62 (2.1 routers). */
export const RouterCapability = {
  MultiChannel: 1,
  RouterDataModel: -2,
} as const;

/** Router sync status strings (`controller/env/sync.go`). */
export const SyncStatus = {
  New: 'SYNC_NEW',
  Queued: 'SYNC_QUEUED',
  Hello: 'SYNC_HELLO',
  HelloWait: 'SYNC_HELLO_WAIT',
  ResyncWait: 'SYNC_RESYNC_WAIT',
  InProgress: 'SYNC_IN_PROGRESS',
  Done: 'SYNC_DONE',
  Unknown: 'SYNC_UNKNOWN',
  Disconnected: 'SYNC_DISCONNECTED',
  HelloTimeout: 'SYNC_HELLO_TIMEOUT',
  Error: 'SYNC_ERROR',
} as const;
export type SyncStatus = (typeof SyncStatus)[keyof typeof SyncStatus];
