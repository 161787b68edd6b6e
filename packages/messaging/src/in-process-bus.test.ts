import { createInProcessBus, type InProcessEventBus } from './in-process-bus.js';
import type { ChangeEvent } from './types.js';

let n = 0;
function ev(type: string, source = 'identity-auth', id = `evt-${++n}`): ChangeEvent {
  return { id, type, source, occurredAt: new Date().toISOString(), data: { n } };
}

describe('in-process event bus', () => {
  let bus: InProcessEventBus;
  const logs: string[] = [];
  beforeEach(() => {
    logs.length = 0;
    bus = createInProcessBus({ retryBaseMs: 1, retryMaxMs: 5, log: (m) => logs.push(m) });
  });
  afterEach(() => bus.close());

  it('delivers each event of a durable group to exactly one of its replicas, round-robin', async () => {
    const a: string[] = [];
    const b: string[] = [];
    await bus.subscribeDurable('policy', 'identity-auth', ['identity.deleted'], (e) => void a.push(e.id));
    await bus.subscribeDurable('policy', 'identity-auth', ['identity.deleted'], (e) => void b.push(e.id));
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const e = ev('identity.deleted');
      ids.push(e.id);
      await bus.publish(e);
    }
    await bus.idle();
    expect([...a, ...b].sort()).toEqual([...ids].sort());
    expect(a.length).toBe(5);
    expect(b.length).toBe(5);
  });

  it('gives every group its own copy of each event', async () => {
    const seen: Record<string, string[]> = { g1: [], g2: [] };
    await bus.subscribeDurable('g1', '*', ['identity.*'], (e) => void seen.g1.push(e.id));
    await bus.subscribeDurable('g2', '*', ['identity.*'], (e) => void seen.g2.push(e.id));
    const e = ev('identity.created');
    await bus.publish(e);
    await bus.idle();
    expect(seen).toEqual({ g1: [e.id], g2: [e.id] });
  });

  it('does not run handlers inside publish', async () => {
    const got: string[] = [];
    await bus.subscribeDurable('g', '*', ['>'], (e) => void got.push(e.id));
    await bus.subscribeBroadcast('*', ['>'], (e) => void got.push(e.id));
    await bus.publish(ev('identity.created'));
    expect(got).toEqual([]);
    await bus.idle();
    expect(got).toHaveLength(2);
  });

  it('retries a durable handler that throws, with backoff, until it succeeds', async () => {
    let calls = 0;
    await bus.subscribeDurable('g', 'identity-auth', ['identity.deleted'], () => {
      calls++;
      if (calls < 3) throw new Error('transient');
    });
    await bus.publish(ev('identity.deleted'));
    await bus.idle();
    expect(calls).toBe(3);
    expect(logs.filter((l) => l.includes('will retry'))).toHaveLength(2);
  });

  it('drops an event after maxAttempts failed deliveries, and keeps delivering the next ones', async () => {
    await bus.close();
    bus = createInProcessBus({ retryBaseMs: 1, maxAttempts: 3, log: (m) => logs.push(m) });
    const ok: string[] = [];
    let calls = 0;
    await bus.subscribeDurable('g', '*', ['a.b'], (e) => {
      if ((e.data as { poison?: boolean }).poison) {
        calls++;
        throw new Error('always');
      }
      ok.push(e.id);
    });
    await bus.publish({ ...ev('a.b'), data: { poison: true } });
    const good = ev('a.b');
    await bus.publish(good);
    await bus.idle();
    expect(calls).toBe(3);
    expect(ok).toEqual([good.id]);
    expect(logs.some((l) => l.startsWith('dropping'))).toBe(true);
  });

  it('broadcasts every new event to every subscriber, but not events published before', async () => {
    const old = ev('api-session.deleted');
    await bus.publish(old);
    const a: string[] = [];
    const b: string[] = [];
    await bus.subscribeBroadcast('identity-auth', ['api-session.deleted'], (e) => void a.push(e.id));
    await bus.subscribeBroadcast('*', ['api-session.*'], (e) => void b.push(e.id));
    const e1 = ev('api-session.deleted');
    const e2 = ev('api-session.deleted');
    await bus.publish(e1);
    await bus.publish(e2);
    await bus.idle();
    expect(a).toEqual([e1.id, e2.id]);
    expect(b).toEqual([e1.id, e2.id]);
  });

  it('deduplicates by event id within the bounded memory of recent ids', async () => {
    await bus.close();
    bus = createInProcessBus({ capacity: 2 });
    const got: string[] = [];
    await bus.subscribeBroadcast('*', ['>'], (e) => void got.push(e.id));
    const [x, y, z] = [ev('t'), ev('t'), ev('t')];
    await bus.publish(x);
    await bus.publish({ ...x, data: { other: true } });
    await bus.publish(y);
    await bus.publish(z); // x falls out of the 2-id memory
    await bus.publish(x);
    await bus.idle();
    expect(got).toEqual([x.id, y.id, z.id, x.id]);
  });

  it('filters by source and by NATS-style type wildcards', async () => {
    const got: Record<string, string[]> = { star: [], gt: [], exact: [], other: [] };
    await bus.subscribeDurable('star', 'identity-auth', ['identity.*'], (e) => void got.star.push(e.type));
    await bus.subscribeDurable('gt', 'identity-auth', ['identity.>', 'api-session.deleted'], (e) => void got.gt.push(e.type));
    await bus.subscribeDurable('exact', '*', ['identity.deleted'], (e) => void got.exact.push(e.type));
    await bus.subscribeDurable('other', 'policy', ['>'], (e) => void got.other.push(e.type));
    for (const t of ['identity.created', 'identity.role.changed', 'api-session.deleted', 'identityx.created']) {
      await bus.publish(ev(t));
    }
    await bus.publish(ev('identity.deleted', 'policy'));
    await bus.idle();
    expect(got.star).toEqual(['identity.created']);
    expect(got.gt).toEqual(['identity.created', 'identity.role.changed', 'api-session.deleted']);
    expect(got.exact).toEqual(['identity.deleted']);
    expect(got.other).toEqual(['identity.deleted']);
  });

  it('gives a group created later the matching events still in its history', async () => {
    const early = ev('identity.deleted');
    await bus.publish(early);
    await bus.publish(ev('identity.created'));
    const got: string[] = [];
    await bus.subscribeDurable('late', 'identity-auth', ['identity.deleted'], (e) => void got.push(e.id));
    await bus.idle();
    expect(got).toEqual([early.id]);
  });

  it('keeps a stopped group’s events for its next subscriber', async () => {
    const first: string[] = [];
    const sub = await bus.subscribeDurable('g', '*', ['x'], (e) => void first.push(e.id));
    await sub.stop();
    const e = ev('x');
    await bus.publish(e);
    await bus.idle();
    expect(first).toEqual([]);
    const second: string[] = [];
    await bus.subscribeDurable('g', '*', ['x'], (ev2) => void second.push(ev2.id));
    await bus.idle();
    expect(second).toEqual([e.id]);
  });

  it('hands handlers a copy, as the wire would', async () => {
    const got: ChangeEvent[] = [];
    await bus.subscribeBroadcast('*', ['>'], (e) => void got.push(e));
    const e = ev('x');
    await bus.publish(e);
    await bus.idle();
    expect(got[0]).toEqual(e);
    expect(got[0]).not.toBe(e);
  });

  it('rejects malformed sources, types and group names', async () => {
    await expect(bus.publish(ev('a..b'))).rejects.toThrow(/type/);
    await expect(bus.publish(ev('x', 'identity.auth'))).rejects.toThrow(/source/);
    await expect(bus.subscribeDurable('', '*', ['x'], () => undefined)).rejects.toThrow(/group/);
    await expect(bus.subscribeDurable('g', '*', [], () => undefined)).rejects.toThrow(/type/);
    await expect(bus.subscribeBroadcast('*', ['a.>.b'], () => undefined)).rejects.toThrow(/type/);
  });

  it('refuses to publish after close', async () => {
    await bus.close();
    await expect(bus.publish(ev('x'))).rejects.toThrow(/closed/);
  });
});
