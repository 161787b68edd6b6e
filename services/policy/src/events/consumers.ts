import type { ChangeEvent, EventBus, Subscription } from '@ziti/messaging';
import type { ProjectionManager } from '../domain/projection-manager.js';

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const obj = (v: unknown): Record<string, unknown> | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
const date = (v: unknown, fallback: string): Date => {
  const d = new Date(typeof v === 'string' && v ? v : fallback);
  return Number.isNaN(d.getTime()) ? new Date(fallback) : d;
};

/**
 * The convergence path of the projections (the synchronous RPCs are the primary one): durable
 * consumers of identity-auth's `identity.created|updated|disabled|deleted` and the posture
 * context's `posture-check.created|updated|deleted`. Events without the projected fields (an
 * identity-auth that does not send them yet) are skipped, except deletes.
 *
 * Identity event data: `{identityId, name, roleAttributes, isAdmin, disabled, updatedAt, deleted?}`
 * (and, when sent, `typeId`, `isDefaultAdmin`, `externalId`, `authPolicyId`, `createdAt`, `tags`, and the
 * router data model's `defaultHostingPrecedence`, `defaultHostingCost`, `serviceHostingPrecedences`,
 * `serviceHostingCosts` and `appData`: those not sent keep their stored values).
 * Posture check event data: `{postureCheckId (or id), name, typeId, roleAttributes, updatedAt, deleted?}`
 * (and, when sent, `version`, `createdAt` and `detail`: the check as posture's `/posture-checks/{id}`
 * renders it, with its kind's fields).
 */
export async function startProjectionConsumers(bus: EventBus, projections: ProjectionManager, log: (m: string) => void): Promise<Subscription[]> {
  const identities = await bus.subscribeDurable('policy-identity-projection', 'identity-auth', ['identity.*'], (e) => onIdentity(projections, e, log));
  const checks = await bus.subscribeDurable('policy-posture-check-projection', 'posture', ['posture-check.*'], (e) => onPostureCheck(projections, e, log));
  return [identities, checks];
}

async function onIdentity(projections: ProjectionManager, e: ChangeEvent, log: (m: string) => void): Promise<void> {
  const d = e.data ?? {};
  const identityId = str(d.identityId);
  if (!identityId) return;
  const deleted = e.type === 'identity.deleted' || d.deleted === true;
  const name = str(d.name);
  if (!deleted && name === undefined) {
    log(`policy: skipped ${e.type} ${identityId}: the event carries no projected fields`);
    return;
  }
  await projections.syncIdentity({
    identityId,
    name: name ?? '',
    roleAttributes: strs(d.roleAttributes),
    isAdmin: d.isAdmin === true,
    disabled: d.disabled === true,
    deleted,
    updatedAt: date(d.updatedAt, e.occurredAt),
    typeId: str(d.typeId),
    isDefaultAdmin: typeof d.isDefaultAdmin === 'boolean' ? d.isDefaultAdmin : undefined,
    externalId: d.externalId === undefined ? undefined : (str(d.externalId) ?? null),
    authPolicyId: str(d.authPolicyId),
    createdAt: typeof d.createdAt === 'string' ? date(d.createdAt, e.occurredAt) : undefined,
    tags: obj(d.tags),
    defaultHostingPrecedence: str(d.defaultHostingPrecedence),
    defaultHostingCost: typeof d.defaultHostingCost === 'number' ? d.defaultHostingCost : undefined,
    serviceHostingPrecedences: obj(d.serviceHostingPrecedences) as Record<string, string> | undefined,
    serviceHostingCosts: obj(d.serviceHostingCosts) as Record<string, number> | undefined,
    appData: obj(d.appData),
  });
}

async function onPostureCheck(projections: ProjectionManager, e: ChangeEvent, log: (m: string) => void): Promise<void> {
  const d = e.data ?? {};
  const postureCheckId = str(d.postureCheckId) ?? str(d.id);
  if (!postureCheckId) return;
  const deleted = e.type === 'posture-check.deleted' || d.deleted === true;
  const name = str(d.name);
  if (!deleted && (name === undefined || str(d.typeId) === undefined)) {
    log(`policy: skipped ${e.type} ${postureCheckId}: the event carries no projected fields`);
    return;
  }
  await projections.syncPostureCheck({
    postureCheckId,
    name: name ?? '',
    typeId: str(d.typeId) ?? '',
    roleAttributes: strs(d.roleAttributes),
    deleted,
    updatedAt: date(d.updatedAt, e.occurredAt),
    version: typeof d.version === 'number' ? d.version : undefined,
    createdAt: typeof d.createdAt === 'string' ? date(d.createdAt, e.occurredAt) : undefined,
    detail: obj(d.detail),
  });
}
