import type { IdentityRecord, PostureCheckRecord } from './model.js';
import type { EntityType, PolicyKind, RouterIdentities, UnitOfWork } from './ports.js';
import { type IdentityChange, type PostureCheckChange, type ProjectionManager, hostingOf } from './projection-manager.js';
import { sameSet } from './service-manager.js';

/** A stored link that the policy's role lists no longer select (extra), or a selected one not stored (missing). */
export interface LinkDrift {
  kind: PolicyKind;
  link: string;
  entity: EntityType;
  policyId: string;
  entityId: string;
  missing: boolean;
}

/** A ref-counted pair whose stored counts differ from the counts the links give. */
export interface PairDriftRow {
  kind: PolicyKind;
  table: string;
  counters: string[];
  a: string;
  b: string;
  stored: number[];
  expected: number[];
}

/** What the integrity check reads (store/integrity.ts). */
export interface IntegrityStore {
  linkDrift(kind: PolicyKind, limit: number): Promise<LinkDrift[]>;
  pairDrift(kind: PolicyKind): Promise<PairDriftRow[]>;
  identitiesInRange(after: string, until: string): Promise<IdentityRecord[]>;
  postureChecksInRange(after: string, until: string): Promise<PostureCheckRecord[]>;
  identity(id: string): Promise<IdentityRecord | null>;
  postureCheck(id: string): Promise<PostureCheckRecord | null>;
  /** Lets a re-sync from the source apply: drops the tombstone, and a stored `updatedAt` newer than the source's. */
  allowResync(kind: 'identity' | 'posture-check', id: string, updatedAt: Date): Promise<void>;
  existingIds(kind: 'service' | 'router', ids: readonly string[]): Promise<string[]>;
  /** Ids of the local system identities of tunneler-enabled edge routers, older than the grace period, after `after`. */
  systemIdentityIds(after: string, limit: number, graceSeconds: number): Promise<string[]>;
  /** The tunneler-enabled edge routers among `ids`. */
  tunnelerRouters(ids: readonly string[]): Promise<{ id: string; name: string }[]>;
  /** The identities the given service policies select. */
  policyIdentities(policyIds: readonly string[]): Promise<string[]>;
}

/** Where findings go (the service-kit's `Findings`). */
export interface FindingSink {
  add(description: string, fixed: boolean): void;
  readonly full: boolean;
  readonly limit: number;
}

/**
 * Projection changes younger than this (relative to when the sources were read) are not judged:
 * the synchronous sync or its event may still be on its way.
 */
export const PROJECTION_GRACE_MS = 10_000;

const POLICY_NAMES: Record<PolicyKind, string> = { sp: 'service policy', erp: 'edge router policy', serp: 'service edge router policy' };
const ENTITY_NAMES: Record<EntityType, string> = { identity: 'identity', service: 'service', edgeRouter: 'edge router', postureCheck: 'posture check' };
const PAIR_ENTITIES: Record<PolicyKind, [string, string]> = { sp: ['identity', 'service'], erp: ['identity', 'edge router'], serp: ['service', 'edge router'] };

/** JSON with sorted keys, so stored JSONB and a source's JSON compare by content. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .filter((k) => o[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}

const show = (v: unknown) => (Array.isArray(v) ? `[${[...v].sort().join(', ')}]` : typeof v === 'string' ? `"${v}"` : canonicalJson(v));

/** The fields of an identity projection that differ from its source, as `field "stored" ≠ "source"`. */
export function identityDifferences(p: IdentityRecord, s: IdentityChange): string[] {
  const expected: [string, unknown, unknown][] = [
    ['name', p.name, s.name],
    ['roleAttributes', p.roleAttributes, [...new Set(s.roleAttributes)]],
    ['isAdmin', p.isAdmin, s.isAdmin],
    ['isDefaultAdmin', p.isDefaultAdmin, s.isDefaultAdmin ?? false],
    ['disabled', p.disabled, s.disabled],
    ['typeId', p.typeId, s.typeId || 'Default'],
    ['externalId', p.externalId, s.externalId ?? null],
    ['authPolicyId', p.authPolicyId, s.authPolicyId || 'default'],
    ['tags', p.tags, s.tags ?? {}],
  ];
  // The router data model's fields, when the source sends them (as the projection keeps them).
  const hosting = hostingOf(s, p);
  for (const k of ['defaultHostingPrecedence', 'defaultHostingCost', 'serviceHostingPrecedences', 'serviceHostingCosts', 'appData'] as const) {
    if (s[k] !== undefined) expected.push([k, p[k], hosting[k]]);
  }
  return differences(expected);
}

/** The fields of a posture check projection that differ from its source. */
export function postureCheckDifferences(p: PostureCheckRecord, s: PostureCheckChange): string[] {
  const expected: [string, unknown, unknown][] = [
    ['name', p.name, s.name],
    ['typeId', p.typeId, s.typeId],
    ['roleAttributes', p.roleAttributes, [...new Set(s.roleAttributes)]],
  ];
  if (s.version !== undefined) expected.push(['version', p.version, s.version]);
  if (s.detail !== undefined && s.detail !== null) expected.push(['detail', p.detail, s.detail]);
  return differences(expected);
}

function differences(fields: [string, unknown, unknown][]): string[] {
  const out: string[] = [];
  for (const [name, stored, source] of fields) {
    const same = Array.isArray(stored) && Array.isArray(source) ? sameSet(stored as string[], source as string[]) : canonicalJson(stored) === canonicalJson(source);
    if (!same) out.push(`${name} ${show(stored)} ≠ ${show(source)}`);
  }
  return out;
}

/**
 * Whether a projection row and its source should be judged now (see PROJECTION_GRACE_MS): equal
 * versions always; otherwise only when the newer side is older than the grace period, so a change
 * still travelling (source ahead) or a source read just before a change (projection ahead) is
 * not reported.
 */
export function settled(projectionUpdatedAt: Date, sourceUpdatedAt: Date, asOf: Date): boolean {
  const p = projectionUpdatedAt.getTime();
  const s = sourceUpdatedAt.getTime();
  if (p === s) return true;
  return Math.max(p, s) < asOf.getTime() - PROJECTION_GRACE_MS;
}

/**
 * The policy context's part of the data integrity check: its links and ref-counted pairs against a
 * recomputation from the role lists, and its projections against the sources the gateway hands it.
 * A fix rebuilds every link and pair in one transaction (under the evaluation lock) and re-syncs
 * projections through the same path as `SyncIdentity` / `SyncPostureCheck`.
 */
export class IntegrityManager {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly store: IntegrityStore,
    private readonly projections: ProjectionManager,
    private readonly routerIdentities: RouterIdentities,
  ) {}

  /** The identity ids policy expects identity-auth to have: those of tunneler-enabled edge routers. */
  systemIdentityIds(after: string, limit: number, graceSeconds: number): Promise<string[]> {
    return this.store.systemIdentityIds(after, limit, graceSeconds);
  }

  /**
   * Tunneler-enabled edge routers whose identity identity-auth does not have (`EnsureRouterIdentity`
   * failed after the router write); a fix asks for it again.
   */
  async repairRouterIdentities(goneIds: readonly string[], fix: boolean, sink: FindingSink): Promise<void> {
    for (const r of await this.store.tunnelerRouters(goneIds)) {
      const fixed = fix && (await this.routerIdentities.ensure(r.id, r.name));
      sink.add(`policy: the identity of tunneler-enabled edge router ${r.id} (${r.name}) is missing in identity-auth`, fixed);
    }
  }

  async checkDerived(fix: boolean, sink: FindingSink): Promise<void> {
    const links: LinkDrift[] = [];
    const pairs: PairDriftRow[] = [];
    for (const kind of ['sp', 'erp', 'serp'] as const) {
      links.push(...(await this.store.linkDrift(kind, sink.limit + 1)));
      pairs.push(...(await this.store.pairDrift(kind)));
    }
    if (links.length === 0 && pairs.length === 0) return;
    if (fix) {
      const policies = links.filter((l) => l.kind === 'sp' && l.entity !== 'identity').map((l) => l.policyId);
      const before = await this.store.policyIdentities(policies);
      await this.uow.run(async (tx) => {
        await tx.evaluator.rebuildAll();
        const affected = new Set<string>([...before, ...(await this.store.policyIdentities(policies))]);
        for (const l of links) if (l.kind === 'sp' && l.entity === 'identity') affected.add(l.entityId);
        for (const p of pairs) if (p.kind === 'sp') affected.add(p.a);
        tx.emit({ type: 'service-access.changed', identityIds: [...affected], cause: 'integrity-fix' });
      });
    }
    for (const l of links) {
      const what = `${POLICY_NAMES[l.kind]} ${l.policyId} (${l.link})`;
      const entity = `${ENTITY_NAMES[l.entity]} ${l.entityId}`;
      sink.add(l.missing ? `policy: ${what} is missing ${entity}, which its roles select` : `policy: ${what} links ${entity}, which its roles do not select`, fix);
    }
    for (const p of pairs) {
      const [ea, eb] = PAIR_ENTITIES[p.kind];
      const counts = (v: number[]) => p.counters.map((c, i) => `${c} ${v[i]}`).join(', ');
      sink.add(`policy: ${p.table} pair (${ea} ${p.a}, ${eb} ${p.b}) has ${counts(p.stored)}; the policy links give ${counts(p.expected)}`, fix);
    }
  }

  /** Compares the identity projection rows with ids in (after, until] with the sources of that range. */
  async checkIdentities(sources: IdentityChange[], after: string, until: string, asOf: Date, fix: boolean, sink: FindingSink): Promise<void> {
    const stored = new Map((await this.store.identitiesInRange(after, until)).map((p) => [p.id, p]));
    const grace = asOf.getTime() - PROJECTION_GRACE_MS;
    for (const s of sources) {
      const p = stored.get(s.identityId);
      stored.delete(s.identityId);
      if (p?.isSystem) continue;
      if (!p) {
        if (s.updatedAt.getTime() >= grace) continue;
        sink.add(`policy: identity projection ${s.identityId} is missing (identity-auth has it)`, fix && (await this.resyncIdentity(s)));
        continue;
      }
      const diff = identityDifferences(p, s);
      if (diff.length === 0 || !settled(p.updatedAt, s.updatedAt, asOf)) continue;
      sink.add(`policy: identity projection ${s.identityId} differs from identity-auth: ${diff.join('; ')}`, fix && (await this.resyncIdentity(s)));
    }
    for (const p of stored.values()) {
      if (p.isSystem || p.updatedAt.getTime() >= grace) continue;
      let fixed = false;
      if (fix) {
        await this.projections.syncIdentity({ identityId: p.id, name: p.name, roleAttributes: [], isAdmin: false, disabled: false, deleted: true, updatedAt: laterOf(p.updatedAt) });
        fixed = (await this.store.identity(p.id)) === null;
      }
      sink.add(`policy: identity projection ${p.id} (${p.name}) is extra (identity-auth does not have it)`, fixed);
    }
  }

  async checkPostureChecks(sources: PostureCheckChange[], after: string, until: string, asOf: Date, fix: boolean, sink: FindingSink): Promise<void> {
    const stored = new Map((await this.store.postureChecksInRange(after, until)).map((p) => [p.id, p]));
    const grace = asOf.getTime() - PROJECTION_GRACE_MS;
    for (const s of sources) {
      const p = stored.get(s.postureCheckId);
      stored.delete(s.postureCheckId);
      if (!p) {
        if (s.updatedAt.getTime() >= grace) continue;
        sink.add(`policy: posture check projection ${s.postureCheckId} is missing (posture has it)`, fix && (await this.resyncPostureCheck(s)));
        continue;
      }
      const diff = postureCheckDifferences(p, s);
      if (diff.length === 0 || !settled(p.updatedAt, s.updatedAt, asOf)) continue;
      sink.add(`policy: posture check projection ${s.postureCheckId} differs from posture: ${diff.join('; ')}`, fix && (await this.resyncPostureCheck(s)));
    }
    for (const p of stored.values()) {
      if (p.updatedAt.getTime() >= grace) continue;
      let fixed = false;
      if (fix) {
        await this.projections.syncPostureCheck({ postureCheckId: p.id, name: p.name, typeId: p.typeId, roleAttributes: [], deleted: true, updatedAt: laterOf(p.updatedAt) });
        fixed = (await this.store.postureCheck(p.id)) === null;
      }
      sink.add(`policy: posture check projection ${p.id} (${p.name}) is extra (posture does not have it)`, fixed);
    }
  }

  existingIds(kind: 'service' | 'router', ids: readonly string[]): Promise<string[]> {
    return this.store.existingIds(kind, ids);
  }

  private async resyncIdentity(s: IdentityChange): Promise<boolean> {
    await this.store.allowResync('identity', s.identityId, s.updatedAt);
    await this.projections.syncIdentity({ ...s, deleted: false });
    const p = await this.store.identity(s.identityId);
    return p !== null && identityDifferences(p, s).length === 0;
  }

  private async resyncPostureCheck(s: PostureCheckChange): Promise<boolean> {
    await this.store.allowResync('posture-check', s.postureCheckId, s.updatedAt);
    await this.projections.syncPostureCheck({ ...s, deleted: false });
    const p = await this.store.postureCheck(s.postureCheckId);
    return p !== null && postureCheckDifferences(p, s).length === 0;
  }
}

/** A delete at least as new as the stored row (and now), so the tombstone wins over it. */
function laterOf(d: Date): Date {
  return new Date(Math.max(Date.now(), d.getTime()));
}

