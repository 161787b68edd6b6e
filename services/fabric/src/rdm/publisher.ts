import type { GetRouterDataModelRequest, RouterDataModel } from '@ziti/proto';
import type { RdmChangeSetStore, StoredChangeSet } from '../store/rdm-change-sets.js';
import type { RdmStateStore } from '../store/rdm-state.js';
import { type Model, type ModelChange, type ModelEntity, type PublicKeyEntity, type RevocationEntity, buildModel, diffModels, orderedEntities, publicKeysOf } from './model.js';

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

/** Change sets kept for routers that resubscribe a little behind (beyond: a full state). */
export const REPLAY_LOG = 1000;
const MIN_SUBSCRIPTION_S = 10;
const MAX_SUBSCRIPTION_S = 360;

/**
 * The router data model as this replica holds it and serves it to its routers. Every replica
 * holds the same model at the same index: the change sets are made by the leading replica
 * (`RdmLeader`), stored in `fabric.rdm_change_sets` with their index, and every replica applies
 * them in index order (`catchUp`) and sends each to its subscriptions. A subscription is answered
 * from the last change sets when the router's index allows, else with the full state.
 */
export class RdmPublisher {
  private model: Model = new Map();
  private timelineId = '';
  private index = 0;
  private readonly log: ChangeSet[] = [];
  private readonly subs = new Map<string, Subscription>();
  private loaded = false;
  /** Whether the model is the one of its index: it applied a change set since it last read the sources. */
  private vouched = false;
  private catching: Promise<void> = Promise.resolve();

  constructor(
    private readonly sources: RdmSources,
    private readonly state: RdmStateStore,
    private readonly changeSets: RdmChangeSetStore,
    private readonly problem: (m: string, err?: unknown) => void,
  ) {}

  /** Loads the model: the position first, then everything (a change after the position is applied again, harmlessly). */
  async start(): Promise<void> {
    await this.reload();
    this.loaded = true;
    await this.catchUp();
  }

  get position(): { timelineId: string; index: number } {
    return { timelineId: this.timelineId, index: this.index };
  }

  get ready(): boolean {
    return this.loaded;
  }

  /**
   * Whether the model is known to be the one its index names. A model read from the sources is
   * not: it holds what changed since the last change set was made, which routers at that index
   * have not received if no leader is left to send it (every replica restarted, or read again).
   */
  get knowsItsIndex(): boolean {
    return this.vouched;
  }

  /** The model as it stands (the leader diffs against it). */
  current(): Model {
    return this.model;
  }

  /** Whether a service of the model requires end-to-end encryption. */
  serviceEncryptionRequired(serviceId: string): boolean {
    const v = this.model.get(`service:${serviceId}`)?.value as { encryptionRequired?: boolean } | undefined;
    return v?.encryptionRequired === true;
  }

  /** Everything, as the sources answer now. */
  async readAll(): Promise<Model> {
    const [policy, keys, revocations] = await Promise.all([this.sources.policyModel(), this.sources.publicKeys(), this.sources.revocations()]);
    return buildModel(policy, keys, revocations);
  }

  /** A service's name, when the model holds it. */
  serviceName(serviceId: string): string | undefined {
    const v = this.model.get(`service:${serviceId}`)?.value as { name?: string } | undefined;
    return v?.name;
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

  /** Every 30 s: routers learn the current index (and expired subscriptions are dropped). */
  tick(): void {
    const now = Date.now();
    for (const [routerId, sub] of this.subs) {
      if (sub.expiresAt < now) this.subs.delete(routerId);
      else sub.sink.currentIndex(this.index);
    }
  }

  /**
   * Applies every stored change set after the current index, in order, and sends each to the
   * subscriptions (one catch-up at a time). The first change set of a new timeline holds the whole
   * model: it replaces the model, and every subscription is sent the full state. A gap (sets no
   * longer kept) reloads the whole model and sends every subscription its full state.
   */
  catchUp(): Promise<void> {
    this.catching = this.catching.then(async () => {
      if (!this.loaded) return;
      for (;;) {
        const sets = await this.changeSets.after(this.index);
        if (sets.length === 0) return;
        for (const set of sets) {
          if (set.previousIndex > this.index || (set.timelineId !== this.timelineId && set.previousIndex !== this.index)) {
            await this.reload();
            this.sendFullStates();
            break;
          }
          if (set.timelineId === this.timelineId) this.apply(set);
          else this.rebase(set);
        }
      }
    }).catch((err) => this.problem('fabric: router data model change sets not applied', err));
    return this.catching;
  }

  /** Reads the public keys again: a rotation goes to every subscription as a synthetic change set. */
  async refreshKeys(): Promise<void> {
    if (!this.loaded) return;
    const fresh = buildModel({ configTypes: [], configs: [], identities: [], services: [], servicePolicies: [], postureChecks: [] }, await this.sources.publicKeys());
    const old: Model = new Map([...this.model].filter(([, e]) => e.kind === 'publicKey'));
    const changes = diffModels(old, fresh);
    if (changes.length === 0) return;
    for (const c of changes) {
      if (c.action === 'delete') this.model.delete(`${c.entity.kind}:${c.entity.id}`);
      else this.model.set(`${c.entity.kind}:${c.entity.id}`, c.entity);
    }
    const set: ChangeSet = { index: this.index, previousIndex: 0, synthetic: true, changes };
    for (const sub of this.subs.values()) sub.sink.changeSet(set, undefined);
  }

  private sendFullStates(): void {
    for (const sub of this.subs.values()) sub.sink.fullState(orderedEntities(this.model), this.index, this.timelineId, sub.id);
  }

  /** The first change set of a new timeline: the whole model (but this replica's public keys, which stay). */
  private rebase(stored: StoredChangeSet): void {
    const model: Model = new Map([...this.model].filter(([, e]) => e.kind === 'publicKey'));
    for (const c of stored.changes) if (c.action !== 'delete' && c.entity.kind !== 'publicKey') model.set(`${c.entity.kind}:${c.entity.id}`, c.entity);
    this.model = model;
    this.timelineId = stored.timelineId;
    this.index = stored.index;
    this.log.length = 0;
    this.vouched = true;
    this.sendFullStates();
  }

  private async reload(): Promise<void> {
    const pos = await this.state.load();
    this.model = await this.readAll();
    this.timelineId = pos.timelineId;
    this.index = pos.index;
    // The stored change sets up to here, for routers that resubscribe a little behind (also after
    // a restart): the unbroken run that ends at this index.
    const stored = await this.changeSets.upTo(this.index, REPLAY_LOG).catch(() => []);
    let first = stored.length;
    while (first > 0 && stored[first - 1]!.timelineId === this.timelineId && (first === stored.length ? stored[first - 1]!.index === this.index : stored[first - 1]!.index === stored[first]!.previousIndex)) first--;
    this.log.length = 0;
    for (const set of stored.slice(first)) this.log.push({ index: set.index, previousIndex: set.previousIndex, synthetic: false, changes: set.changes });
    this.vouched = false;
    if (!this.loaded) {
      // Routers that subscribed while the model was loading get their full state now.
      for (const sub of this.subs.values()) sub.sink.fullState(orderedEntities(this.model), this.index, this.timelineId, sub.id);
    }
  }

  private apply(stored: StoredChangeSet): void {
    if (stored.index <= this.index) return;
    for (const c of stored.changes) {
      const key = `${c.entity.kind}:${c.entity.id}`;
      if (c.action === 'delete') this.model.delete(key);
      else this.model.set(key, c.entity);
    }
    const set: ChangeSet = { index: stored.index, previousIndex: stored.previousIndex, synthetic: false, changes: stored.changes };
    this.index = stored.index;
    this.vouched = true;
    this.log.push(set);
    if (this.log.length > REPLAY_LOG) this.log.shift();
    const now = Date.now();
    for (const sub of this.subs.values()) if (sub.expiresAt >= now) sub.sink.changeSet(set, sub.id);
  }
}
