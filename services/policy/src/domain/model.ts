import type { Semantic } from './roles.js';

/** The list parameters as they arrive (§4.1). */
export interface ListRequest {
  filter?: string;
  limit?: string;
  offset?: string;
  sort?: string;
}

export interface Page<T> {
  items: T[];
  totalCount: number;
  limit: number;
  offset: number;
  filterableFields: string[];
}

export type Tags = Record<string, unknown>;

interface Entity {
  id: string;
  tags: Tags;
  createdAt: Date;
  updatedAt: Date;
}

export type ConfigTarget = 'service' | 'router' | null;

export interface ConfigType extends Entity {
  name: string;
  schema: Record<string, unknown>;
  target: ConfigTarget;
}

export interface Config extends Entity {
  name: string;
  configTypeId: string;
  configTypeName: string;
  data: Record<string, unknown>;
}

export interface Service extends Entity {
  name: string;
  roleAttributes: string[];
  encryptionRequired: boolean;
  maxIdleTimeMillis: number;
  terminatorStrategy: string;
  /** Config ids in their stored order. */
  configs: string[];
}

export type RouterKind = 'edge' | 'transit' | 'fabric';

export interface Router extends Entity {
  name: string;
  kind: RouterKind;
  fingerprint: string | null;
  cost: number;
  noTraversal: boolean;
  disabled: boolean;
  ctrlChanListeners: Record<string, string[]>;
  roleAttributes: string[];
  isTunnelerEnabled: boolean;
  appData: Tags;
  configs: string[];
}

export interface Terminator extends Entity {
  serviceId: string;
  serviceName: string;
  routerId: string;
  routerName: string;
  binding: string;
  address: string;
  /** The instance id (the Edge API's `identity`, the fabric API's `instanceId`). */
  identity: string;
  cost: number;
  precedence: string;
  /** The hosting identity (router-created edge terminators), '' for others. */
  hostId: string;
  /** OpenZiti's static peer data: decimal key -> base64 value. */
  peerData: Record<string, string>;
  /** Created by the controller for a router (edge binds), not by an administrator. */
  isSystem: boolean;
  savedPrecedence: string | null;
}

/** A router's live state as the router control plane (fabric) reports it. */
export interface RouterLiveState {
  /** The control channel is up (fabric `connected`, management `/routers` `isOnline`). */
  connected: boolean;
  /** Connected as an edge router (`/edge-routers` `isOnline`). */
  isOnline: boolean;
  syncStatus: string;
  hostname: string;
  supportedProtocols: Record<string, string>;
  versionInfo: { version: string; revision: string; buildDate: string; os: string; arch: string } | null;
  listenerAddresses: string[];
}

/** How a router renders when fabric does not report it (not configured, unreachable, never connected). */
export const OFFLINE_ROUTER: RouterLiveState = Object.freeze({
  connected: false,
  isOnline: false,
  syncStatus: 'SYNC_UNKNOWN',
  hostname: '',
  supportedProtocols: {},
  versionInfo: null,
  listenerAddresses: [],
}) as RouterLiveState;

export type PolicyType = 'Dial' | 'Bind';

export interface ServicePolicy extends Entity {
  name: string;
  type: PolicyType;
  semantic: Semantic;
  identityRoles: string[];
  serviceRoles: string[];
  postureCheckRoles: string[];
}

export interface EdgeRouterPolicy extends Entity {
  name: string;
  semantic: Semantic;
  identityRoles: string[];
  edgeRouterRoles: string[];
  isSystem: boolean;
}

export interface ServiceEdgeRouterPolicy extends Entity {
  name: string;
  semantic: Semantic;
  serviceRoles: string[];
  edgeRouterRoles: string[];
}

/** What identity-auth says an identity hosts services with, and its appData (the router data model carries them). */
export interface IdentityHosting {
  /** "default", "required" or "failed". */
  defaultHostingPrecedence: string;
  defaultHostingCost: number;
  /** service id → precedence / cost, overriding the defaults. */
  serviceHostingPrecedences: Record<string, string>;
  serviceHostingCosts: Record<string, number>;
  appData: Tags;
}

/** The projection of an identity of identity-auth (plus the local router identities). */
export interface IdentityRecord extends Entity, IdentityHosting {
  name: string;
  roleAttributes: string[];
  isAdmin: boolean;
  isDefaultAdmin: boolean;
  disabled: boolean;
  typeId: string;
  externalId: string | null;
  authPolicyId: string;
  isSystem: boolean;
}

/** The projection of a posture check of the posture context. */
export interface PostureCheckRecord extends Entity {
  name: string;
  typeId: string;
  roleAttributes: string[];
  version: number;
  /** The posture context's own rendering (postureCheckDetail), when it sent one. */
  detail: Record<string, unknown> | null;
}

/** A service as one identity sees it. */
export interface ServiceView extends Service {
  /** Bind first, then Dial; `Invalid` when neither (management only). */
  permissions: string[];
  /** Config type name → data, for the requested config types. */
  config: Record<string, Record<string, unknown>>;
  postureQueries: PostureQueries[];
}

export interface PostureQueries {
  policyId: string;
  policyType: PolicyType;
  isPassing: boolean;
  postureQueries: Record<string, unknown>[];
}

/** Enrollment state of a router, as the pki-enrollment context reports it (absent when unavailable). */
export interface RouterEnrollmentInfo {
  jwt: string | null;
  token: string | null;
  expiresAt: string | null;
  createdAt: string | null;
  isVerified: boolean;
  fingerprint: string | null;
  certPem: string | null;
}

export interface RoleUsage {
  roleAttribute: string;
  usage: Record<string, { count: number; ids?: string[] }>;
}
