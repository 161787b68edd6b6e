import type { GetRouterDataModelRequest, RouterDataModel } from '@ziti/proto';
import type { RdmChangeSetStore } from '../store/rdm-change-sets.js';
import type { RdmStateStore } from '../store/rdm-state.js';
import { CHANGE_KINDS, type ChangeKind, type EntityKind, type ModelChange, REVOCATION_CHANGE, buildModel, diffModels, orderedEntities, patchModel } from './model.js';
import { REPLAY_LOG, type RdmPublisher, type RdmSources } from './publisher.js';

const EMPTY_POLICY_MODEL: RouterDataModel = { configTypes: [], configs: [], identities: [], services: [], servicePolicies: [], postureChecks: [] };

/**
 * The making of change sets, by the one replica that leads the router data model (`Leadership`):
 * a signalled change (`router-data-model.changed`, `revocation.created`) makes it read only the
 * entities named (coalesced with a read already running), a refresh reads everything; the
 * difference to the model is stored as the next change set (its index taken from
 * `fabric.rdm_state`, never reused) and applied here and, on their signal, by every replica.
 * Replicas that do not lead ignore the signals: the leader's change sets reach them.
 */
export class RdmLeader {
  private leading = false;
  private running: Promise<void> | undefined;
  private again = false;
  private wantFull = false;
  private named = new Map<EntityKind, Set<string>>();
  private stores = 0;

  constructor(
    private readonly d: {
      sources: RdmSources;
      publisher: RdmPublisher;
      state: RdmStateStore;
      changeSets: RdmChangeSetStore;
      /** Tells every replica a change set was stored. */
      stored(index: number): void;
      problem(m: string, err?: unknown): void;
    },
  ) {}

  /** This replica now leads: everything is read again (what the last leader may have missed). */
  lead(): void {
    this.leading = true;
    void this.refresh();
  }

  lose(): void {
    this.leading = false;
    this.wantFull = false;
    this.named.clear();
  }

  get isLeading(): boolean {
    return this.leading;
  }

  /** Entities changed: only they are read again. An unknown kind makes the next read whole. */
  changed(changes: readonly { kind: string; id: string }[]): Promise<void> {
    if (!this.leading) return Promise.resolve();
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

  /** Reads the whole model again (the periodic convergence). */
  refresh(): Promise<void> {
    if (!this.leading) return Promise.resolve();
    this.wantFull = true;
    return this.kick();
  }

  private kick(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.once();
        } while (this.leading && this.d.publisher.ready && (this.again || this.wantFull || this.named.size > 0));
      } catch (err) {
        this.d.problem('fabric: router data model refresh failed', err);
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  private async once(): Promise<void> {
    const full = this.wantFull;
    const named = this.named;
    this.wantFull = false;
    this.named = new Map();
    if (!full && named.size === 0) return;
    // The model must hold every stored change set before it is diffed.
    // Not loaded yet: read everything once it is (the service refreshes after the load).
    if (!this.d.publisher.ready) return void (this.wantFull = true);
    await this.d.publisher.catchUp();
    if (!this.d.publisher.knowsItsIndex) return this.newTimeline();
    const before = this.d.publisher.current();
    let changes: ModelChange[];
    if (full) {
      changes = diffModels(before, await this.d.publisher.readAll(), false);
    } else {
      const only: GetRouterDataModelRequest = { partial: true, configTypeIds: [], configIds: [], serviceIds: [], servicePolicyIds: [], identityIds: [], postureCheckIds: [] };
      for (const k of Object.values(CHANGE_KINDS)) only[k.field] = [...(named.get(k.kind) ?? [])];
      const policyNamed = Object.values(CHANGE_KINDS).some((k) => named.has(k.kind));
      const revocationIds = named.get('revocation');
      const [policyPart, revocations] = await Promise.all([
        policyNamed ? this.d.sources.policyModel(only) : Promise.resolve(EMPTY_POLICY_MODEL),
        revocationIds ? this.d.sources.revocations([...revocationIds]) : Promise.resolve([]),
      ]);
      const patched = patchModel(before, named, buildModel(policyPart, [], revocations));
      changes = diffModels(before, patched.model, false, patched.touched);
    }
    if (changes.length === 0 || !this.leading) return;
    const previousIndex = this.d.publisher.position.index;
    const pos = await this.d.state.next();
    await this.d.changeSets.add({ index: pos.index, previousIndex, timelineId: pos.timelineId, changes });
    await this.d.publisher.catchUp();
    this.d.stored(pos.index);
    if (++this.stores % 100 === 0) await this.d.changeSets.trim(REPLAY_LOG).catch((err) => this.d.problem('fabric: old change sets not trimmed', err));
  }

  /**
   * This replica leads with a model read from the sources, not made by change sets: no replica may
   * hold the model of the stored index (all were restarted), so what changed meanwhile cannot be
   * told as a difference. A new timeline starts with the whole model as its first change set;
   * every replica takes it, and routers are sent the full state (also when they resubscribe with
   * the old timeline) instead of missing those changes.
   */
  private async newTimeline(): Promise<void> {
    const whole = await this.d.publisher.readAll();
    if (!this.leading) return;
    const previousIndex = this.d.publisher.position.index;
    const pos = await this.d.state.newTimeline();
    const changes: ModelChange[] = orderedEntities(whole).filter((entity) => entity.kind !== 'publicKey').map((entity) => ({ action: 'create', entity }));
    await this.d.changeSets.add({ index: pos.index, previousIndex, timelineId: pos.timelineId, changes });
    await this.d.publisher.catchUp();
    this.d.stored(pos.index);
  }
}
