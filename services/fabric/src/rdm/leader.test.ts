import type { RouterDataModel } from '@ziti/proto';
import type { RdmChangeSetStore, StoredChangeSet } from '../store/rdm-change-sets.js';
import type { RdmPosition, RdmStateStore } from '../store/rdm-state.js';
import { RdmLeader } from './leader.js';
import type { ModelEntity } from './model.js';
import { type ChangeSet, RdmPublisher, type RdmSink } from './publisher.js';

/** fabric.rdm_state and fabric.rdm_change_sets as the replicas share them, in memory. */
class SharedStores {
  pos: RdmPosition = { timelineId: 't0', index: 0 };
  readonly sets: StoredChangeSet[] = [];
  readonly state = {
    load: async () => ({ ...this.pos }),
    next: async () => ({ ...(this.pos = { ...this.pos, index: this.pos.index + 1 }) }),
    newTimeline: async () => ({ ...(this.pos = { timelineId: `t${this.pos.index + 1}`, index: this.pos.index + 1 }) }),
  } as unknown as RdmStateStore;
  readonly changeSets = {
    add: async (s: StoredChangeSet) => void this.sets.push(JSON.parse(JSON.stringify(s)) as StoredChangeSet),
    after: async (index: number) => this.sets.filter((s) => s.index > index),
    upTo: async (index: number, limit: number) => this.sets.filter((s) => s.index <= index).slice(-limit),
    trim: async () => undefined,
  } as unknown as RdmChangeSetStore;
}

const identity = (id: string) => ({ id, name: id, disabled: false, defaultHostingPrecedence: '', defaultHostingCost: 0, serviceHostingPrecedences: {}, serviceHostingCosts: {}, appDataJson: '', serviceConfigs: {} });
const model = (services: string[]): RouterDataModel => ({
  configTypes: [],
  configs: [],
  identities: [identity('i1')],
  services: services.map((id) => ({ id, name: id, encryptionRequired: true, configIds: [] })),
  servicePolicies: [],
  postureChecks: [],
});

/** What policy answers now. */
let services: string[];
const sources = { policyModel: async () => model(services), publicKeys: async () => [], revocations: async () => [] };
const problem = (m: string, err?: unknown) => {
  throw new Error(`${m}: ${String(err)}`);
};

/** A router's subscription, as recorded. */
class Sink implements RdmSink {
  readonly full: { ids: string[]; endIndex: number; timelineId: string }[] = [];
  readonly sets: ChangeSet[] = [];
  fullState(entities: ModelEntity[], endIndex: number, timelineId: string): void {
    this.full.push({ ids: entities.map((e) => `${e.kind}:${e.id}`), endIndex, timelineId });
  }
  changeSet(set: ChangeSet): void {
    this.sets.push(set);
  }
  currentIndex(): void {}
}

/** A replica: its publisher and its leader (leading when told). */
function replica(stores: SharedStores) {
  const publisher = new RdmPublisher(sources, stores.state, stores.changeSets, problem);
  const leader = new RdmLeader({ sources, publisher, state: stores.state, changeSets: stores.changeSets, stored: () => undefined, problem });
  return { publisher, leader };
}

beforeEach(() => {
  services = ['s1'];
});

describe('leading the router data model', () => {
  it('a leader that made or applied the change sets of its index sends a change as a change set on the same timeline', async () => {
    const stores = new SharedStores();
    const a = replica(stores);
    await a.publisher.start();
    a.leader.lead();
    await a.leader.refresh();
    const timeline = a.publisher.position.timelineId;
    const sink = new Sink();
    a.publisher.subscribe('r1', sink, { currentIndex: a.publisher.position.index, timelineId: timeline, durationSeconds: 60, subscriptionId: 'sub' });
    services = ['s1', 's2'];
    await a.leader.refresh();
    expect(a.publisher.position.timelineId).toBe(timeline);
    expect(sink.full).toEqual([]);
    expect(sink.sets.map((s) => s.changes.map((c) => `${c.action}:${c.entity.id}`))).toEqual([['create:s2']]);
  });

  it('every replica restarted meanwhile: a change made while none ran reaches a router that resubscribes with its index (a new timeline and the full state)', async () => {
    const stores = new SharedStores();
    const before = replica(stores);
    await before.publisher.start();
    before.leader.lead();
    await before.leader.refresh();
    services = ['s1', 's-before'];
    await before.leader.refresh();
    const routerAt = before.publisher.position;

    // Both replicas gone; a service is created; two new replicas read the sources, one leads.
    services = ['s1', 's-before', 's-while-down'];
    const [lead, follow] = [replica(stores), replica(stores)];
    await lead.publisher.start();
    await follow.publisher.start();
    const followSink = new Sink();
    follow.publisher.subscribe('r2', followSink, { currentIndex: routerAt.index, timelineId: routerAt.timelineId, durationSeconds: 60, subscriptionId: 'sub2' });
    expect(followSink.full).toEqual([]);
    lead.leader.lead();
    await lead.leader.refresh();
    expect(lead.publisher.position.timelineId).not.toBe(routerAt.timelineId);

    // The follower takes the new timeline from the stored change set: its router gets the full state.
    await follow.publisher.catchUp();
    expect(follow.publisher.position).toEqual(lead.publisher.position);
    expect(followSink.full).toHaveLength(1);
    expect(followSink.full[0]!.ids).toEqual(expect.arrayContaining(['service:s-while-down', 'service:s-before', 'identity:i1']));
    expect(followSink.full[0]!.timelineId).toBe(lead.publisher.position.timelineId);

    // A router resubscribing with the old timeline gets the full state; with the new one, replays.
    const late = new Sink();
    lead.publisher.subscribe('r3', late, { currentIndex: routerAt.index, timelineId: routerAt.timelineId, durationSeconds: 60, subscriptionId: 'sub3' });
    expect(late.full.map((f) => f.ids.includes('service:s-while-down'))).toEqual([true]);
    services = ['s1', 's-while-down'];
    await lead.leader.refresh();
    await follow.publisher.catchUp();
    expect(followSink.sets.map((s) => s.changes.map((c) => `${c.action}:${c.entity.id}`))).toEqual([['delete:s-before']]);
    expect(lead.publisher.position.timelineId).toBe(followSink.full[0]!.timelineId);
  });
});
