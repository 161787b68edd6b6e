import type { GetRouterDataModelRequest, RouterDataModel } from '@ziti/proto';
import type { RdmStateStore } from '../store/rdm-state.js';
import {
  CHANGE_KINDS,
  type ChangeKind,
  type EntityKind,
  type Model,
  type ModelChange,
  type ModelEntity,
  type PublicKeyEntity,
  REVOCATION_CHANGE,
  type RevocationEntity,
  buildModel,
  diffModels,
  orderedEntities,
  patchModel,
  publicKeysOf,
} from './model.js';

/** How the model reaches a router (the wire encoding lives in `wire.ts`). */
export interface RdmSink {
  /** A full state (OpenZiti DataState 20500) for the subscription. */
  fullState(entities: ModelEntity[], endIndex: number, timelineId: string, subscriptionId: string): void;
  /** One change set (20501). Synthetic ones (public keys) carry no subscription id. */
  changeSet(set: ChangeSet, subscriptionId: string | undefined): void;
  /** The current index (20506, header 1025). */
  currentIndex(index: number): void;
}

export interface ChangeSet {
  index: number;
  previousIndex: number;
  synthetic: boolean;
  changes: ModelChange[];
}

export interface SubscribeRequest {
  currentIndex: number;
  durationSeconds: number;
  timelineId: string;
  subscriptionId: string;
}

interface Subscription {
  sink: RdmSink;
  id: string;
  expiresAt: number;
}

export interface RdmSources {
  /** The whole policy model, or (with `only.partial`) the entities it names. */
  policyModel(only?: GetRouterDataModelRequest): Promise<RouterDataModel>;
  publicKeys(): Promise<PublicKeyEntity[]>;
  /** The live revocations: those of `ids`, or every one. */
  revocations(ids?: readonly string[]): Promise<RevocationEntity[]>;
}

const EMPTY_POLICY_MODEL: RouterDataModel = { configTypes: [], configs: [], identities: [], services: [], servicePolicies: [], postureChecks: [] };

/** Change sets kept for routers that resubscribe a little behind (beyond: a full state). */
const REPLAY_LOG = 1000;
const MIN_SUBSCRIPTION_S = 10;
const MAX_SUBSCRIPTION_S = 360;

/**
 * The router data model of this replica: built from policy's part and the public keys, refreshed
 * whenever a change is signalled (and on a timer, which converges missed signals), diffed into
 * change sets with a durable monotonic index, and sent to every live subscription in order.
 */
export class RdmPublisher {
  private model: Model = new Map();
  private timelineId = '';
  private index = 0;
  private readonly log: ChangeSet[] = [];
  private readonly subs = new Map<string, Subscription>();
  private refreshing: Promise<void> | undefined;
  private again = false;
  /** What the next refresh reads: everything, or the entities changes named. */
  private wantFull = false;
  private named = new Map<EntityKind, Set<string>>();
  private loaded = false;
  /** A change was signalled while the model was loading: read it all again once loaded. */
  private changedWhileLoading = false;

  constructor(
    private readonly sources: RdmSources,
    private readonly state: RdmStateStore,
    private readonly problem: (m: string, err?: unknown) => void,
  ) {}

  /** Loads the position and the first model. */
  async start(): Promise<void> {
    const pos = await this.state.load();
    this.timelineId = pos.timelineId;
    this.index = pos.index;
    this.model = await this.readAll();
    this.loaded = true;
    // Routers that subscribed while the model was loading get their full state now.
    for (const sub of this.subs.values()) sub.sink.fullState(orderedEntities(this.model), this.index, this.timelineId, sub.id);
    if (this.changedWhileLoading) void this.refresh();
  }

  get position(): { timelineId: string; index: number } {
    return { timelineId: this.timelineId, index: this.index };
  }

  /** Whether a service of the model requires end-to-end encryption. */
  serviceEncryptionRequired(serviceId: string): boolean {
    const v = this.model.get(`service:${serviceId}`)?.value as { encryptionRequired?: boolean } | undefined;
    return v?.encryptionRequired === true;
  }

  /** A service's name, when the model holds it. */
  serviceName(serviceId: string): string | undefined {
    const v = this.model.get(`service:${serviceId}`)?.value as { name?: string } | undefined;
    return v?.name;
  }

  get ready(): boolean {
    return this.loaded;
  }

  /** The public keys, for the synthetic change set sent after a router's hello. */
  keysChangeSet(): ChangeSet {
    return { index: this.index, previousIndex: 0, synthetic: true, changes: publicKeysOf(this.model).map((entity) => ({ action: 'create', entity })) };
  }

  /** A router subscribes (20505): the change sets it misses, or the full state. */
  subscribe(routerId: string, sink: RdmSink, req: SubscribeRequest): void {
    const seconds = Math.min(MAX_SUBSCRIPTION_S, Math.max(MIN_SUBSCRIPTION_S, req.durationSeconds || MIN_SUBSCRIPTION_S));
    this.subs.set(routerId, { sink, id: req.subscriptionId, expiresAt: Date.now() + seconds * 1000 });
    // Not loaded yet: the full state follows the load (`start`).
    if (!this.loaded) return;
    const first = this.log[0];
    const replayable =
      req.timelineId === this.timelineId && req.currentIndex <= this.index && (req.currentIndex === this.index || (first !== undefined && first.previousIndex <= req.currentIndex));
    if (replayable) {
      for (const set of this.log) if (set.index > req.currentIndex) sink.changeSet(set, req.subscriptionId);
      return;
    }
    sink.fullState(orderedEntities(this.model), this.index, this.timelineId, req.subscriptionId);
  }

  /** The channel `sink` belongs to closed: its subscription goes (not a newer channel's). */
  unsubscribe(routerId: string, sink?: RdmSink): void {
    if (sink === undefined || this.subs.get(routerId)?.sink === sink) this.subs.delete(routerId);
  }

  /**
   * Entities changed (`router-data-model.changed`): only they are read again, then diffed (coalesced
   * with a refresh already running). An unknown kind makes the next refresh whole.
   */
  changed(changes: readonly { kind: string; id: string }[]): Promise<void> {
    if (!this.loaded) return this.whileLoading();
    for (const c of changes) {
      const kind = c.kind === REVOCATION_CHANGE ? 'revocation' : CHANGE_KINDS[c.kind as ChangeKind]?.kind;
      if (!kind) this.wantFull = true;
      else {
        const set = this.named.get(kind) ?? new Set<string>();
        set.add(c.id);
        this.named.set(kind, set);
      }
    }
    return this.kick();
  }

  /** Reads the whole model again (the periodic convergence, key rotation). */
  refresh(): Promise<void> {
    if (!this.loaded) return this.whileLoading();
    this.wantFull = true;
    return this.kick();
  }

  /** Before the first load nothing is diffed (the load reads everything); a change then asks for one more read. */
  private whileLoading(): Promise<void> {
    this.changedWhileLoading = true;
    return Promise.resolve();
  }

  private kick(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      try {
        do {
          this.again = false;
          await this.refreshOnce();
        } while (this.again || this.wantFull || this.named.size > 0);
      } catch (err) {
        this.problem('fabric: router data model refresh failed', err);
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /** Every 30 s: routers learn the current index (and expired subscriptions are dropped). */
  tick(): void {
    const now = Date.now();
    for (const [routerId, sub] of this.subs) {
      if (sub.expiresAt < now) this.subs.delete(routerId);
      else sub.sink.currentIndex(this.index);
    }
  }

  private async readAll(): Promise<Model> {
    const [policy, keys, revocations] = await Promise.all([this.sources.policyModel(), this.sources.publicKeys(), this.sources.revocations()]);
    return buildModel(policy, keys, revocations);
  }

  private async refreshOnce(): Promise<void> {
    const full = this.wantFull;
    const named = this.named;
    this.wantFull = false;
    this.named = new Map();
    if (!full && named.size === 0) return;
    let next: Model;
    let changes: ModelChange[];
    let keyChanges: ModelChange[] = [];
    if (full) {
      next = await this.readAll();
      changes = diffModels(this.model, next, false);
      keyChanges = diffModels(new Map([...this.model].filter(([, e]) => e.kind === 'publicKey')), new Map([...next].filter(([, e]) => e.kind === 'publicKey')));
    } else {
      const only: GetRouterDataModelRequest = { partial: true, configTypeIds: [], configIds: [], serviceIds: [], servicePolicyIds: [], identityIds: [], postureCheckIds: [] };
      for (const k of Object.values(CHANGE_KINDS)) only[k.field] = [...(named.get(k.kind) ?? [])];
      const policyNamed = Object.values(CHANGE_KINDS).some((k) => named.has(k.kind));
      const revocationIds = named.get('revocation');
      const [policyPart, revocations] = await Promise.all([
        policyNamed ? this.sources.policyModel(only) : Promise.resolve(EMPTY_POLICY_MODEL),
        revocationIds ? this.sources.revocations([...revocationIds]) : Promise.resolve([]),
      ]);
      const patched = patchModel(this.model, named, buildModel(policyPart, [], revocations));
      next = patched.model;
      changes = diffModels(this.model, next, false, patched.touched);
    }
    this.model = next;
    if (changes.length > 0) {
      const previousIndex = this.index;
      const pos = await this.state.next();
      this.index = pos.index;
      const set: ChangeSet = { index: pos.index, previousIndex, synthetic: false, changes };
      this.log.push(set);
      if (this.log.length > REPLAY_LOG) this.log.shift();
      const now = Date.now();
      for (const sub of this.subs.values()) if (sub.expiresAt >= now) sub.sink.changeSet(set, sub.id);
    }
    if (keyChanges.length > 0) {
      const set: ChangeSet = { index: this.index, previousIndex: 0, synthetic: true, changes: keyChanges };
      for (const sub of this.subs.values()) sub.sink.changeSet(set, undefined);
    }
  }
}
