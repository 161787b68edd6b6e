import { createSchemaPool } from '@ziti/db-kit';
import type { RouterDataModel } from '@ziti/proto';
import { createTestDatabase, type TestDatabase } from '@ziti/test-kit';
import type { Pool } from 'pg';
import { SCHEMA, runMigrations } from '../schema.js';
import { Leadership } from '../store/leadership.js';
import { RdmChangeSetStore } from '../store/rdm-change-sets.js';
import { RdmStateStore } from '../store/rdm-state.js';
import { RdmLeader } from './leader.js';
import type { ModelEntity } from './model.js';
import { type ChangeSet, RdmPublisher, type RdmSink, type RdmSources } from './publisher.js';

/**
 * The router data model shared by replicas, on a real PostgreSQL: one leader makes the change
 * sets, every replica applies them in index order, a replica started later replays what a router
 * missed, and one that fell behind the kept sets reloads.
 */
const serverUrl = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

const policy: RouterDataModel = { configTypes: [], configs: [], identities: [], services: [], servicePolicies: [], postureChecks: [] };
const sources: RdmSources = {
  policyModel: async (only) => (only?.partial ? { ...policy, services: policy.services.filter((s) => only.serviceIds.includes(s.id)) } : { ...policy, services: [...policy.services] }),
  publicKeys: async () => [],
  revocations: async () => [],
};
const service = (id: string) => ({ id, name: `svc-${id}`, encryptionRequired: false, configIds: [] });

class Sink implements RdmSink {
  readonly fulls: { entities: ModelEntity[]; endIndex: number }[] = [];
  readonly sets: ChangeSet[] = [];
  fullState(entities: ModelEntity[], endIndex: number): void {
    this.fulls.push({ entities, endIndex });
  }
  changeSet(set: ChangeSet): void {
    if (!set.synthetic) this.sets.push(set);
  }
  currentIndex(): void {}
}

const problems: string[] = [];
const problem = (m: string, err?: unknown) => void problems.push(`${m}: ${String(err)}`);

let db: TestDatabase;
const pools: Pool[] = [];
function replica() {
  const pool = createSchemaPool(db.url, SCHEMA, { max: 4 });
  pools.push(pool);
  const state = new RdmStateStore(pool);
  const changeSets = new RdmChangeSetStore(pool);
  const publisher = new RdmPublisher(sources, state, changeSets, problem);
  const leader = new RdmLeader({ sources, publisher, state, changeSets, stored: () => undefined, problem });
  return { pool, publisher, leader, changeSets };
}
const subscribe = (p: RdmPublisher, sink: Sink, currentIndex: number, timelineId: string) =>
  p.subscribe(`r-${Math.random()}`, sink, { currentIndex, timelineId, durationSeconds: 60, subscriptionId: 'sub' });

beforeAll(async () => {
  db = await createTestDatabase(serverUrl, 'fabric_rdm');
  await runMigrations(db.url);
});
afterAll(async () => {
  for (const p of pools) await p.end();
  await db?.drop();
});

describe('the router data model across replicas', () => {
  it('one leader makes each change set once; every replica sends the same sets in index order', async () => {
    const a = replica();
    const b = replica();
    await a.publisher.start();
    await b.publisher.start();
    // The first leader of a fresh model starts a timeline (its first change set is the whole model).
    a.leader.lead();
    await a.leader.refresh();
    await b.publisher.catchUp();
    expect(b.publisher.position).toEqual(a.publisher.position);
    const [sa, sb] = [new Sink(), new Sink()];
    const { timelineId, index: start } = a.publisher.position;
    subscribe(a.publisher, sa, start, timelineId);
    subscribe(b.publisher, sb, start, timelineId);
    // b does not lead: its signals make nothing
    policy.services.push(service('s1'));
    await b.leader.changed([{ kind: 'service', id: 's1' }]);
    expect(await a.changeSets.after(start)).toEqual([]);
    await a.leader.changed([{ kind: 'service', id: 's1' }]);
    policy.services.push(service('s2'));
    await a.leader.changed([{ kind: 'service', id: 's2' }]);
    await b.publisher.catchUp();
    const ids = (s: Sink) => s.sets.map((c) => [c.previousIndex, c.index, c.changes.map((x) => `${x.action}:${x.entity.id}`).join()]);
    expect(ids(sa)).toEqual([
      [start, start + 1, 'create:s1'],
      [start + 1, start + 2, 'create:s2'],
    ]);
    expect(ids(sb)).toEqual(ids(sa));
    expect(b.publisher.position.index).toBe(start + 2);
    expect(problems).toEqual([]);
  });

  it('a replica started later answers a router a little behind with the sets it missed (replay), not a full state', async () => {
    const c = replica();
    await c.publisher.start();
    const { timelineId, index } = c.publisher.position;
    const sink = new Sink();
    subscribe(c.publisher, sink, index - 2, timelineId);
    expect(sink.fulls).toEqual([]);
    expect(sink.sets.map((s) => s.index)).toEqual([index - 1, index]);
    // another timeline (or an index too old) gets the full state
    const other = new Sink();
    subscribe(c.publisher, other, index - 1, 'another-timeline');
    expect(other.fulls.map((f) => f.endIndex)).toEqual([index]);
  });

  it('a replica behind the kept sets reads the model again and sends its routers full states', async () => {
    const leaderReplica = replica();
    const behind = replica();
    await leaderReplica.publisher.start();
    await behind.publisher.start();
    leaderReplica.leader.lead();
    await leaderReplica.leader.refresh();
    await behind.publisher.catchUp();
    const sink = new Sink();
    subscribe(behind.publisher, sink, behind.publisher.position.index, behind.publisher.position.timelineId);
    for (const id of ['s3', 's4', 's5']) {
      policy.services.push(service(id));
      await leaderReplica.leader.changed([{ kind: 'service', id }]);
    }
    // the first of them is no longer kept
    const end = leaderReplica.publisher.position.index;
    await leaderReplica.pool.query('DELETE FROM rdm_change_sets WHERE index = $1', [end - 2]);
    await behind.publisher.catchUp();
    expect(behind.publisher.position.index).toBe(end);
    expect(sink.fulls.map((f) => f.endIndex)).toEqual([end]);
    expect(sink.fulls[0]!.entities.map((e) => e.id)).toEqual(expect.arrayContaining(['s1', 's2', 's3', 's4', 's5']));
  });

  it('the advisory lock makes one leader at a time; the next takes over when it lets go', async () => {
    const [x, y] = [replica(), replica()];
    const led: string[] = [];
    const lx = new Leadership(x.pool, 'test-leadership', { lead: () => led.push('x'), lose: () => led.push('x-lost') }, problem, 100);
    const ly = new Leadership(y.pool, 'test-leadership', { lead: () => led.push('y'), lose: () => led.push('y-lost') }, problem, 100);
    lx.start();
    await until(() => lx.leading);
    ly.start();
    await new Promise((r) => setTimeout(r, 400));
    expect([lx.leading, ly.leading]).toEqual([true, false]);
    await lx.stop();
    await until(() => ly.leading);
    await ly.stop();
    expect(led).toEqual(['x', 'y']);
  });
});

async function until(probe: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}
