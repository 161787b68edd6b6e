import { ApiError } from '@ziti/errors';
import type { IdentityHosting, Tags } from './model.js';
import type { UnitOfWork } from './ports.js';
import { PRECEDENCES, sameSet } from './service-manager.js';

/**
 * An identity change, as identity-auth reports it (SyncIdentity or an identity.* event). The
 * hosting fields and appData are absent from an older sender: the stored ones are kept (defaults
 * for a new row), as they are for a value that is not valid.
 */
export interface IdentityChange extends Partial<IdentityHosting> {
  identityId: string;
  name: string;
  roleAttributes: string[];
  isAdmin: boolean;
  disabled: boolean;
  deleted: boolean;
  /** Ordering: older changes than the stored one are ignored. */
  updatedAt: Date;
  typeId?: string;
  isDefaultAdmin?: boolean;
  externalId?: string | null;
  authPolicyId?: string;
  createdAt?: Date;
  tags?: Tags;
}

/** A posture check change, as the posture context reports it. */
export interface PostureCheckChange {
  postureCheckId: string;
  name: string;
  typeId: string;
  roleAttributes: string[];
  deleted: boolean;
  updatedAt: Date;
  version?: number;
  createdAt?: Date;
  /**
   * The check as the posture context renders it (`/posture-checks/{id}`, with its kind's fields:
   * macAddresses, domains, operatingSystems, process, processes and semantic, timeoutSeconds…).
   * Absent: a sender that does not carry it; the stored one is kept for the same version.
   */
  detail?: Record<string, unknown> | null;
}

const MAX_COST = 65535;
const isPrecedence = (v: unknown): v is string => typeof v === 'string' && PRECEDENCES.includes(v);
const isCost = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= MAX_COST;
const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const validEntries = <T>(m: Record<string, unknown>, ok: (v: unknown) => v is T): Record<string, T> =>
  Object.fromEntries(Object.entries(m).filter((e): e is [string, T] => ok(e[1])));

/** The identity's hosting fields and appData after the change: the change's valid ones, else the stored ones, else the defaults. */
export function hostingOf(c: Partial<IdentityHosting>, existing: IdentityHosting | null): IdentityHosting {
  return {
    defaultHostingPrecedence: isPrecedence(c.defaultHostingPrecedence) ? c.defaultHostingPrecedence : (existing?.defaultHostingPrecedence ?? 'default'),
    defaultHostingCost: isCost(c.defaultHostingCost) ? c.defaultHostingCost : (existing?.defaultHostingCost ?? 0),
    serviceHostingPrecedences: isMap(c.serviceHostingPrecedences) ? validEntries(c.serviceHostingPrecedences, isPrecedence) : (existing?.serviceHostingPrecedences ?? {}),
    serviceHostingCosts: isMap(c.serviceHostingCosts) ? validEntries(c.serviceHostingCosts, isCost) : (existing?.serviceHostingCosts ?? {}),
    appData: isMap(c.appData) ? c.appData : (existing?.appData ?? {}),
  };
}

/**
 * Keeps the projections of other contexts' entities (identities, posture checks) and re-evaluates
 * policies when their role attributes change. Idempotent and ordered by `updatedAt`: the same
 * change applied twice (RPC and event) or a stale one arriving late changes nothing.
 */
export class ProjectionManager {
  constructor(private readonly uow: UnitOfWork) {}

  async syncIdentity(c: IdentityChange): Promise<void> {
    if (!c.identityId) throw ApiError.field('identityId', 'identityId is required', c.identityId);
    await this.uow.run(async (tx) => {
      const existing = await tx.identities.find(c.identityId);
      if (existing?.isSystem && existing.typeId === 'Router' && !c.deleted) return;
      if (c.deleted) {
        if (existing && existing.updatedAt <= c.updatedAt) {
          await tx.evaluator.detach('identity', c.identityId);
          await tx.evaluator.removeReferences('identity', c.identityId);
        }
        await tx.identities.delete(c.identityId, c.updatedAt);
        return;
      }
      if (!c.name) throw ApiError.field('name', 'name is required', c.name);
      const attrs = [...new Set(c.roleAttributes)];
      const result = await tx.identities.upsert({
        id: c.identityId,
        name: c.name,
        roleAttributes: attrs,
        isAdmin: c.isAdmin,
        isDefaultAdmin: c.isDefaultAdmin ?? existing?.isDefaultAdmin ?? false,
        disabled: c.disabled,
        typeId: c.typeId || existing?.typeId || 'Default',
        externalId: c.externalId !== undefined ? c.externalId : (existing?.externalId ?? null),
        authPolicyId: c.authPolicyId || existing?.authPolicyId || 'default',
        isSystem: false,
        tags: c.tags ?? existing?.tags ?? {},
        ...hostingOf(c, existing),
        createdAt: existing?.createdAt ?? c.createdAt ?? c.updatedAt,
        updatedAt: c.updatedAt,
      });
      if (!result.applied) return;
      if (result.previousAttributes === null || !sameSet(result.previousAttributes, attrs)) {
        const { affectedIdentities } = await tx.evaluator.entity('identity', c.identityId, attrs);
        tx.emit({ type: 'service-access.changed', identityIds: affectedIdentities, cause: 'identity' });
      }
    });
  }

  async syncPostureCheck(c: PostureCheckChange): Promise<void> {
    if (!c.postureCheckId) throw ApiError.field('postureCheckId', 'postureCheckId is required', c.postureCheckId);
    await this.uow.run(async (tx) => {
      if (c.deleted) {
        const existing = (await tx.postureChecks.findMany([c.postureCheckId]))[0];
        if (!existing || existing.updatedAt > c.updatedAt) {
          await tx.postureChecks.delete(c.postureCheckId, c.updatedAt);
          return;
        }
        const { affectedIdentities } = await tx.evaluator.detach('postureCheck', c.postureCheckId);
        await tx.evaluator.removeReferences('postureCheck', c.postureCheckId);
        await tx.postureChecks.delete(c.postureCheckId, c.updatedAt);
        tx.emit({ type: 'service-access.changed', identityIds: affectedIdentities, cause: 'posture-check' });
        return;
      }
      const attrs = [...new Set(c.roleAttributes)];
      const existing = (await tx.postureChecks.findMany([c.postureCheckId]))[0];
      const result = await tx.postureChecks.upsert({
        id: c.postureCheckId,
        name: c.name,
        typeId: c.typeId,
        roleAttributes: attrs,
        version: c.version ?? existing?.version ?? 1,
        detail: c.detail ?? (existing && existing.updatedAt.getTime() === c.updatedAt.getTime() ? existing.detail : null),
        tags: (c.detail?.tags as Tags | undefined) ?? existing?.tags ?? {},
        createdAt: existing?.createdAt ?? c.createdAt ?? c.updatedAt,
        updatedAt: c.updatedAt,
      });
      if (!result.applied) return;
      if (result.previousAttributes === null || !sameSet(result.previousAttributes, attrs)) {
        const { affectedIdentities } = await tx.evaluator.entity('postureCheck', c.postureCheckId, attrs);
        tx.emit({ type: 'service-access.changed', identityIds: affectedIdentities, cause: 'posture-check' });
      }
    });
  }
}
