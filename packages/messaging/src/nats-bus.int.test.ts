import { randomBytes, randomUUID } from 'node:crypto';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { testInfra } from '@ziti/test-kit';
import { createNatsBus, type NatsBusOptions } from './nats-bus.js';
import { compileFilter, durableName } from './subjects.js';
import type { ChangeEvent, EventBus } from './types.js';

const run = randomBytes(4).toString('hex');
const stream = `TEST_MESSAGING_${run}`;
const prefix = `test.messaging.${run}`;

let url: string;
let nc: NatsConnection;
let jsm: JetStreamManager;
const buses: EventBus[] = [];
const logs: string[] = [];

async function bus(extra: Partial<NatsBusOptions> = {}): Promise<EventBus> {
  const b = await createNatsBus({ url, stream, subjectPrefix: prefix, retryBaseMs: 50, log: (m) => logs.push(m), ...extra });
  buses.push(b);
  return b;
}

function ev(source: string, type: string, id = randomUUID()): ChangeEvent {
  return { id, source, type, occurredAt: new Date().toISOString(), data: { at: Date.now() } };
}

async function waitFor(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** True once the group's consumer has nothing left to deliver and nothing awaiting an ack. */
async function settled(group: string, source: string, types: string[]): Promise<boolean> {
  const info = await jsm.consumers.info(stream, durableName(group, compileFilter(source, types)));
  return info.num_pending === 0 && info.num_ack_pending === 0;
}

beforeAll(async () => {
  url = (await testInfra()).natsUrl;
  nc = await connect({ servers: url });
  jsm = await nc.jetstreamManager();
});

afterAll(async () => {
  await Promise.all(buses.map((b) => b.close()));
  await jsm.streams.delete(stream).catch(() => undefined);
  await nc.close();
});

describe('NATS JetStream bus', () => {
  it('creates the stream with the expected configuration', async () => {
    await bus();
    const info = await jsm.streams.info(stream);
    expect(info.config.subjects).toEqual([`${prefix}.*.>`]);
    expect(info.config.storage).toBe('file');
    expect(info.config.retention).toBe('limits');
    expect(info.config.duplicate_window).toBe(120 * 1e9);
    expect(info.config.max_age).toBe(24 * 3600 * 1e9);
  });

  it('publishes on <prefix>.<source>.<type>', async () => {
    const b = await bus();
    const e = ev('identity-auth', 'api-session.deleted');
    await b.publish(e);
    const stored = await jsm.streams.getMessage(stream, { last_by_subj: `${prefix}.identity-auth.api-session.deleted` });
    expect(stored.header.get('Nats-Msg-Id')).toBe(e.id);
    expect(stored.json<ChangeEvent>()).toEqual(e);
  });

  it('delivers each event to exactly one of two replicas of a durable group', async () => {
    const [b1, b2] = [await bus({ name: 'replica-1' }), await bus({ name: 'replica-2' })];
    const seen: string[] = [];
    const types = ['identity.deleted'];
    await b1.subscribeDurable('share', 'src-share', types, (e) => void seen.push(e.id));
    await b2.subscribeDurable('share', 'src-share', types, (e) => void seen.push(e.id));
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const e = ev('src-share', 'identity.deleted');
      ids.push(e.id);
      await b1.publish(e);
    }
    await waitFor(async () => seen.length >= 20 && (await settled('share', 'src-share', types)), 'all events handled');
    expect([...seen].sort()).toEqual([...ids].sort());
  });

  it('redelivers an event whose handler threw, and acks it once the handler succeeds', async () => {
    const b = await bus();
    const deliveries: string[] = [];
    let failed = false;
    const types = ['identity.updated'];
    await b.subscribeDurable('retry', 'src-retry', types, (e) => {
      deliveries.push(e.id);
      if (!failed) {
        failed = true;
        throw new Error('transient failure');
      }
    });
    const e = ev('src-retry', 'identity.updated');
    await b.publish(e);
    await waitFor(async () => deliveries.length >= 2 && (await settled('retry', 'src-retry', types)), 'redelivery');
    expect(deliveries).toEqual([e.id, e.id]);
    expect(logs.some((l) => l.includes('will retry'))).toBe(true);
  });

  it('runs a handler that fails because a dependency is down again until it is back, beyond maxDeliver, without dropping the event', async () => {
    const b = await bus({ maxDeliver: 2, retryBaseMs: 1 });
    let attempts = 0;
    const handled: string[] = [];
    await b.subscribeDurable('outage-group', 'policy', ['service.updated'], (e) => {
      if (++attempts <= 6) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', syscall: 'connect', errno: -111 });
      handled.push(e.id);
    });
    const event = ev('policy', 'service.updated');
    await b.publish(event);
    await waitFor(() => handled.length === 1, 'the handler to succeed once the dependency is back');
    await waitFor(() => settled('outage-group', 'policy', ['service.updated']), 'the event to be acked');
    expect(handled).toEqual([event.id]);
    expect(logs.filter((l) => l.includes(event.id))).toEqual([]);
  });

  it('keeps events for a durable group while none of its replicas runs', async () => {
    const b = await bus();
    const types = ['service.created'];
    const first = await b.subscribeDurable('resume', 'src-resume', types, () => undefined);
    await first.stop();
    const e = ev('src-resume', 'service.created');
    await b.publish(e);
    const got: string[] = [];
    await b.subscribeDurable('resume', 'src-resume', types, (x) => void got.push(x.id));
    await waitFor(() => got.length >= 1, 'delivery after resubscribe');
    expect(got).toEqual([e.id]);
  });

  it('broadcasts every new event to every subscriber, not the older ones', async () => {
    const [b1, b2] = [await bus(), await bus()];
    const old = ev('src-bc', 'api-session.deleted');
    await b1.publish(old);
    const got1: string[] = [];
    const got2: string[] = [];
    await b1.subscribeBroadcast('src-bc', ['api-session.deleted'], (e) => void got1.push(e.id));
    await b2.subscribeBroadcast('*', ['api-session.*', 'identity.deleted'], (e) => void got2.push(e.id));
    const fresh = [ev('src-bc', 'api-session.deleted'), ev('src-bc', 'api-session.deleted'), ev('src-bc', 'api-session.deleted')];
    for (const e of fresh) await b2.publish(e);
    await waitFor(() => got1.length >= 3 && got2.length >= 3, 'broadcasts');
    expect(got1).toEqual(fresh.map((e) => e.id));
    expect(got2).toEqual(fresh.map((e) => e.id));
  });

  it('deduplicates a re-published event id', async () => {
    const [b1, b2] = [await bus(), await bus()];
    const types = ['identity.created'];
    const got: string[] = [];
    await b1.subscribeDurable('dedup', 'src-dedup', types, (e) => void got.push(e.id));
    const e = ev('src-dedup', 'identity.created');
    await b1.publish(e);
    await b2.publish({ ...e, data: { again: true } });
    const marker = ev('src-dedup', 'identity.created');
    await b1.publish(marker);
    await waitFor(async () => got.includes(marker.id) && (await settled('dedup', 'src-dedup', types)), 'marker');
    expect(got).toEqual([e.id, marker.id]);
  });

  it('filters durable and broadcast subscriptions by source and wildcard types', async () => {
    const b = await bus();
    const src = 'src-wild';
    const sel: Record<string, [string, string[]]> = {
      star: [src, ['identity.*']],
      multi: [src, ['identity.>', 'api-session.deleted']],
      anySource: ['*', ['identity.deleted']],
    };
    const got: Record<string, string[]> = { star: [], multi: [], anySource: [], broadcast: [] };
    for (const [group, [source, types]] of Object.entries(sel)) {
      await b.subscribeDurable(`wild-${group}`, source, types, (e) => void got[group].push(`${e.source}:${e.type}`));
    }
    await b.subscribeBroadcast(src, ['identity.*', 'api-session.*'], (e) => void got.broadcast.push(e.type));
    const events = [
      ev(src, 'identity.created'),
      ev(src, 'identity.role.changed'),
      ev(src, 'api-session.deleted'),
      ev(src, 'identityx.created'),
      ev('src-wild-other', 'identity.deleted'),
    ];
    for (const e of events) await b.publish(e);
    await waitFor(async () => {
      for (const [group, [source, types]] of Object.entries(sel)) {
        if (!(await settled(`wild-${group}`, source, types))) return false;
      }
      return got.broadcast.length >= 2;
    }, 'filtered deliveries');
    expect(got.star).toEqual([`${src}:identity.created`]);
    expect(got.multi).toEqual([`${src}:identity.created`, `${src}:identity.role.changed`, `${src}:api-session.deleted`]);
    expect(got.anySource).toContain('src-wild-other:identity.deleted');
    expect(got.anySource.every((x) => x.endsWith(':identity.deleted'))).toBe(true);
    expect(got.broadcast).toEqual(['identity.created', 'api-session.deleted']);
  });

  it('refuses to publish after close', async () => {
    const b = await bus();
    await b.close();
    await expect(b.publish(ev('src-closed', 'x'))).rejects.toThrow(/closed/);
  });

  it('publishes records as plain NATS messages on <prefix>.<name>, which the stream does not store', async () => {
    const b = await bus();
    const sub = nc.subscribe(`${prefix}.*`, { max: 1 });
    await nc.flush();
    const before = (await jsm.streams.info(stream)).state.messages;
    b.publishRecord('entityChange', { namespace: 'entityChange', eventId: 'e1' });
    let got: { subject: string; body: unknown } | undefined;
    for await (const m of sub) got = { subject: m.subject, body: m.json() };
    expect(got).toEqual({ subject: `${prefix}.entityChange`, body: { namespace: 'entityChange', eventId: 'e1' } });
    expect((await jsm.streams.info(stream)).state.messages).toBe(before);
  });

  it('leaves a stream of an earlier version (<prefix>.>) as it is, and works on it', async () => {
    const oldStream = `${stream}_OLD`;
    const oldPrefix = `test.messaging-old.${run}`;
    await jsm.streams.add({ name: oldStream, subjects: [`${oldPrefix}.>`] });
    try {
      const b = await bus({ stream: oldStream, subjectPrefix: oldPrefix });
      await b.publish(ev('src-old', 'identity.created'));
      await b.close();
      const info = await jsm.streams.info(oldStream);
      expect(info.config.subjects).toEqual([`${oldPrefix}.>`]);
      expect(info.state.messages).toBe(1);
    } finally {
      await jsm.streams.delete(oldStream);
    }
  });
});
