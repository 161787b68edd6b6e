import type { AuthOutcome } from '@ziti/http-kit';
import type { ChangeEvent } from '@ziti/messaging';
import { circuitRecords, linkRecords, routerRecords } from './fabric-records.js';
import { metricsRecords, usageRecords } from './metrics-records.js';

/**
 * OpenZiti's event records (controller/event/*.go of openziti/ziti), rendered from the contexts'
 * change events. Field names and values follow the Go structs' JSON tags; a field the Go struct
 * always writes but this controller cannot know is written empty (`""`), as Go writes an unset
 * string. Timestamps are RFC 3339 (the change event's `occurredAt`).
 */

/** The namespaces (OpenZiti's `*EventNS`), which are also the subject's last token. */
export const NAMESPACES = ['entityChange', 'apiSession', 'session', 'authentication', 'entityCount', 'router', 'circuit', 'link', 'metrics', 'usage'] as const;
export type Namespace = (typeof NAMESPACES)[number];

/**
 * The namespaces emitted when `ZITI_EVENTS` is unset: all but `metrics` and `usage`, which are
 * many records a minute per router (one per reported value, one per circuit with traffic).
 */
export const DEFAULT_NAMESPACES: readonly Namespace[] = NAMESPACES.filter((n) => n !== 'metrics' && n !== 'usage');

/** A record: `namespace`, `event_src_id`, `timestamp` and the fields of its kind. */
export interface OpenZitiRecord {
  namespace: Namespace;
  event_src_id: string;
  timestamp: string;
  [field: string]: unknown;
}

/** What every record says about where it came from. */
export interface RecordSource {
  /** `event_src_id`: the controller id (`ZITI_INSTANCE_ID`). */
  controllerId: string;
  /** `metadata.version` of entity change records (OpenZiti's global metadata). */
  version: string;
}

type Data = Record<string, unknown>;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The records an event becomes (none for an event no record is made from). */
export function toRecords(event: ChangeEvent, src: RecordSource): OpenZitiRecord[] {
  const head = { event_src_id: src.controllerId, timestamp: event.occurredAt };
  const d = event.data as Data;
  const [kind, action] = splitType(event.type);
  switch (`${event.source}/${kind}`) {
    case 'identity-auth/identity':
      return entityChange(event, src, 'identities', action === 'deleted' ? 'deleted' : action === 'created' ? 'created' : 'updated', identityState(d));
    case 'identity-auth/auth-policy':
      return entityChange(event, src, 'authPolicies', changeType(action), { id: str(d.authPolicyId) });
    case 'posture/posture-check':
      return entityChange(event, src, 'postureChecks', changeType(action), postureCheckState(d));
    case 'pki-enrollment/ca':
      return entityChange(event, src, 'cas', action === 'deleted' ? 'deleted' : 'updated', { id: str(d.caId) });
    case 'policy/router':
      return entityChange(event, src, routerEntityType(d.kind), 'deleted', { id: str(d.routerId) });
    case 'identity-auth/api-session':
      return action === 'deleted' ? [apiSession(head, 'deleted', d)] : [];
    case 'session/session':
      return action === 'deleted' ? [sessionRecord(head, 'deleted', d)] : [];
    case 'fabric/router':
      return action === 'metrics' ? [...metricsRecords(event, src.controllerId), ...usageRecords(event, src.controllerId)] : routerRecords(event, src.controllerId, action);
    case 'fabric/circuit':
      return circuitRecords(event, src.controllerId, action);
    case 'fabric/link':
      return linkRecords(event, src.controllerId, action);
    default:
      return [];
  }
}

/**
 * `SessionEvent` of a legacy session. A delete comes from `session.deleted`; a create from what
 * the session context hands the gateway on the `POST /sessions` answer. No `token` (omitempty).
 */
export function sessionRecord(head: { event_src_id: string; timestamp: string }, eventType: 'created' | 'deleted', d: Data): OpenZitiRecord {
  return {
    namespace: 'session',
    ...head,
    event_type: eventType,
    session_type: str(d.type),
    provider: 'legacy',
    id: str(d.sessionId),
    api_session_id: str(d.apiSessionId),
    identity_id: str(d.identityId),
    service_id: str(d.serviceId),
  };
}

/** OpenZiti's `EntityCountEvent`: the counts `GET /summary` answers, or the error that prevented them. */
export function entityCountRecord(src: RecordSource, at: Date, result: { counts: Record<string, number> } | { error: string }): OpenZitiRecord {
  return { namespace: 'entityCount', event_src_id: src.controllerId, timestamp: at.toISOString(), ...result };
}

function splitType(type: string): [string, string] {
  const i = type.lastIndexOf('.');
  return i < 0 ? [type, ''] : [type.slice(0, i), type.slice(i + 1)];
}

function changeType(action: string): 'created' | 'updated' | 'deleted' {
  return action === 'created' || action === 'deleted' ? action : 'updated';
}

/**
 * `EntityChangeEvent`: the change, then `committed` with the same `eventId` (OpenZiti sends the
 * change before its commit and `committed` after it; the outbox publishes after the commit, so
 * both follow at once). The change's `initialState` is known only for a delete (the event
 * carries the deleted entity); `finalState` is the entity after a create or update.
 */
function entityChange(event: ChangeEvent, src: RecordSource, entityType: string, eventType: 'created' | 'updated' | 'deleted', state: Data): OpenZitiRecord[] {
  const head = { namespace: 'entityChange' as const, event_src_id: src.controllerId, timestamp: event.occurredAt, eventId: event.id };
  return [
    {
      ...head,
      eventType,
      metadata: { version: src.version },
      entityType,
      isParentEvent: false,
      ...(eventType === 'deleted' ? { initialState: state } : { finalState: state }),
    },
    { ...head, eventType: 'committed' },
  ];
}

/** The identity projection of `identity.*`, in the field names of OpenZiti's `db.Identity`. */
function identityState(d: Data): Data {
  return {
    id: str(d.identityId),
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
    tags: d.tags ?? {},
    isSystem: false,
    name: d.name,
    identityTypeId: d.typeId,
    isDefaultAdmin: d.isDefaultAdmin === true,
    isAdmin: d.isAdmin === true,
    roleAttributes: d.roleAttributes ?? [],
    authPolicyId: d.authPolicyId,
    externalId: d.externalId ?? null,
    disabled: d.disabled === true,
  };
}

/** The posture check of `posture-check.*`: its API detail without links. */
function postureCheckState(d: Data): Data {
  const detail = { ...((d.detail as Data | undefined) ?? {}) };
  delete detail._links;
  return { id: str(d.postureCheckId), ...detail };
}

/** OpenZiti's store names: an edge router's change is one of `edgeRouters`, a transit router's of `transitRouters`. */
function routerEntityType(kind: unknown): string {
  return kind === 'edge' ? 'edgeRouters' : kind === 'transit' ? 'transitRouters' : 'routers';
}

/** `ApiSessionEvent` of a legacy (zt-session) API session. The token never travels: `token` is empty. */
function apiSession(head: { event_src_id: string; timestamp: string }, eventType: 'created' | 'deleted', d: Data): OpenZitiRecord {
  return {
    namespace: 'apiSession',
    ...head,
    event_type: eventType,
    id: str(d.apiSessionId),
    type: 'legacy',
    token: '',
    identity_id: str(d.identityId),
    ip_address: str(d.ipAddress),
    cert_generated: false,
  };
}

/**
 * `AuthenticationEvent` of a login's outcome (identity-auth hands it to the gateway on the login's
 * response); a success also created an API session (`ApiSessionEvent` `created`).
 */
export function authenticationRecords(src: RecordSource, at: Date, o: AuthOutcome): OpenZitiRecord[] {
  const head = { event_src_id: src.controllerId, timestamp: at.toISOString() };
  const auth: OpenZitiRecord = {
    namespace: 'authentication',
    ...head,
    event_type: o.success ? 'success' : 'fail',
    type: o.method,
    authenticator_id: o.authenticatorId ?? '',
    external_jwt_signer_id: o.externalJwtSignerId ?? '',
    identity_id: o.identityId ?? '',
    auth_policy_id: o.authPolicyId ?? '',
    remote_address: o.remoteAddress,
    success: o.success,
    reason: o.reason ?? '',
    improper_client_cert_chain: o.improperClientCertChain === true,
  };
  if (!o.success || !o.apiSessionId) return [auth];
  return [auth, apiSession(head, 'created', { apiSessionId: o.apiSessionId, identityId: o.identityId, ipAddress: o.remoteAddress })];
}
