import { readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { connect, type NatsConnection, type Subscription } from 'nats';
import { auth, type EdgeApi } from '../support/clients.js';
import { eventually, networkBuilder, sessionClients } from '../support/clients-session.js';
import { useController } from '../support/controller.js';
import { expectSuccess } from '../support/envelope.js';

/**
 * The OpenZiti-format event stream: records on `<subject prefix>.<namespace>` (plain NATS) and in
 * the JSON-lines file, in the field names of OpenZiti's controller/event structs.
 */

type Rec = Record<string, any>;

const eventsFile = path.join(os.tmpdir(), `ziti-events-${process.pid}-${Date.now()}.jsonl`);
const ctl = useController({
  events: {
    namespaces: ['entityChange', 'apiSession', 'session', 'authentication', 'entityCount'],
    file: eventsFile,
    entityCountIntervalMs: 1000,
  },
});

let nc: NatsConnection;
let sub: Subscription;
const records: { subject: string; record: Rec }[] = [];
const waiters = new Set<() => void>();
let mgmt: EdgeApi;
let net: ReturnType<typeof networkBuilder>;

/** Resolves with the first record (seen so far or arriving later) that `match` accepts. */
function record(what: string, match: (r: Rec, subject: string) => boolean, timeoutMs = 15_000): Promise<{ subject: string; record: Rec }> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const found = records.find((x) => match(x.record, x.subject));
      if (!found) return false;
      waiters.delete(check);
      clearTimeout(timer);
      resolve(found);
      return true;
    };
    const timer = setTimeout(() => {
      waiters.delete(check);
      reject(new Error(`no ${what} record; got ${JSON.stringify(records.map((x) => x.record)).slice(0, 2000)}`));
    }, timeoutMs);
    if (!check()) waiters.add(check);
  });
}

const prefix = () => ctl().options.natsSubjectPrefix!;
const expectHead = (r: Rec, namespace: string) => {
  expect(r.namespace).toBe(namespace);
  expect(typeof r.event_src_id).toBe('string');
  expect(r.event_src_id.length).toBeGreaterThan(0);
  expect(Number.isNaN(Date.parse(r.timestamp))).toBe(false);
};

beforeAll(async () => {
  nc = await connect({ servers: ctl().infra.natsUrl });
  sub = nc.subscribe(`${prefix()}.*`);
  void (async () => {
    for await (const m of sub) {
      records.push({ subject: m.subject, record: m.json<Rec>() });
      for (const w of [...waiters]) w();
    }
  })();
  await nc.flush();
  mgmt = await ctl().adminSession('management');
  net = networkBuilder(mgmt);
});

afterAll(async () => {
  await nc?.drain();
  await rm(eventsFile, { force: true });
});

describe('OpenZiti-format event records', () => {
  it('entityChange: an identity created, updated and deleted, each followed by committed', async () => {
    const name = net.unique('ev-identity');
    const created = await mgmt.identities.create({ name, type: 'User', isAdmin: false, roleAttributes: ['ev'] });
    expectSuccess(created, 201);
    const id = created.body.data.id as string;
    const c = await record('identity created', (r) => r.namespace === 'entityChange' && r.eventType === 'created' && r.finalState?.id === id);
    expect(c.subject).toBe(`${prefix()}.entityChange`);
    expectHead(c.record, 'entityChange');
    expect(c.record).toMatchObject({ entityType: 'identities', isParentEvent: false, metadata: { version: expect.any(String) } });
    expect(c.record.finalState).toMatchObject({ id, name, isAdmin: false, roleAttributes: ['ev'], disabled: false, isSystem: false });
    expect(c.record.initialState).toBeUndefined();
    const committed = await record('committed', (r) => r.eventType === 'committed' && r.eventId === c.record.eventId);
    expect(committed.record.entityType).toBeUndefined();
    expect(committed.record.isParentEvent).toBeUndefined();

    expectSuccess(await mgmt.identities.patch(id, { roleAttributes: ['ev', 'changed'] }));
    const u = await record('identity updated', (r) => r.eventType === 'updated' && r.finalState?.id === id);
    expect(u.record.finalState.roleAttributes).toEqual(['ev', 'changed']);

    expectSuccess(await mgmt.identities.delete(id));
    const d = await record('identity deleted', (r) => r.eventType === 'deleted' && r.initialState?.id === id);
    expect(d.record).toMatchObject({ entityType: 'identities', initialState: { id, name } });
    expect(d.record.finalState).toBeUndefined();
  });

  it('authentication: a success (with its apiSession created) and a failure', async () => {
    const who = await net.identity();
    const ok = await auth.login(ctl().http, who.username, who.password, 'client');
    expect(ok.res.status).toBe(200);
    // The outcome identity-auth hands the gateway is internal: the caller never sees it.
    expect(Object.keys(ok.res.headers).filter((h) => h.startsWith('x-ziti-'))).toEqual([]);
    const apiSessionId = ok.res.body.data.id as string;
    const success = await record('authentication success', (r) => r.namespace === 'authentication' && r.event_type === 'success' && r.identity_id === who.id);
    expect(success.subject).toBe(`${prefix()}.authentication`);
    expectHead(success.record, 'authentication');
    expect(success.record).toMatchObject({ type: 'password', success: true, reason: '', remote_address: '127.0.0.1', external_jwt_signer_id: '', improper_client_cert_chain: false });
    expect(success.record.authenticator_id).toEqual(expect.any(String));
    expect(success.record.authenticator_id.length).toBeGreaterThan(0);
    expect(success.record.auth_policy_id.length).toBeGreaterThan(0);
    const created = await record('apiSession created', (r) => r.namespace === 'apiSession' && r.event_type === 'created' && r.id === apiSessionId);
    expect(created.record).toMatchObject({ type: 'legacy', identity_id: who.id, ip_address: '127.0.0.1', token: '', cert_generated: false });

    const bad = await auth.login(ctl().http, who.username, `${who.password}-wrong`, 'client');
    expect(bad.res.status).toBe(401);
    expect(Object.keys(bad.res.headers).filter((h) => h.startsWith('x-ziti-'))).toEqual([]);
    const fail = await record('authentication fail', (r) => r.namespace === 'authentication' && r.event_type === 'fail' && r.identity_id === who.id);
    expect(fail.record).toMatchObject({ type: 'password', success: false, authenticator_id: success.record.authenticator_id, remote_address: '127.0.0.1' });
    expect(fail.record.reason).toMatch(/password does not match/);

    const unknown = await auth.login(ctl().http, net.unique('nobody'), 'whatever-Pw1!', 'client');
    expect(unknown.res.status).toBe(401);
    const anonymous = await record('authentication fail of an unknown user', (r) => r.event_type === 'fail' && r.identity_id === '' && /lookup/.test(r.reason));
    expect(anonymous.record.authenticator_id).toBe('');
  });

  it('session: created and deleted; apiSession: deleted', async () => {
    const tag = net.unique('ev');
    const who = await net.identity([`${tag}-u`]);
    await net.edgeRouter([`${tag}-r`]);
    await net.edgeRouterPolicy([`#${tag}-u`], [`#${tag}-r`]);
    const serviceId = await net.service([`${tag}-s`]);
    await net.serviceEdgeRouterPolicy([`#${tag}-s`], [`#${tag}-r`]);
    await net.servicePolicy('Dial', [`#${tag}-u`], [`#${tag}-s`]);
    const login = await auth.login(ctl().http, who.username, who.password, 'client');
    const apiSessionId = login.res.body.data.id as string;
    const api = sessionClients(login.session);

    const created = await api.createSession(serviceId);
    expectSuccess(created, 201);
    const sessionId = created.body.data.id as string;
    expect(Object.keys(created.headers).filter((h) => h.startsWith('x-ziti-'))).toEqual([]);
    const c = await record('session created', (r) => r.namespace === 'session' && r.event_type === 'created' && r.id === sessionId);
    expect(c.subject).toBe(`${prefix()}.session`);
    expectHead(c.record, 'session');
    expect(c.record).toMatchObject({ session_type: 'Dial', provider: 'legacy', api_session_id: apiSessionId, identity_id: who.id, service_id: serviceId });
    expect(c.record.token).toBeUndefined();

    expectSuccess(await api.sessions.delete(sessionId));
    const d = await record('session deleted', (r) => r.namespace === 'session' && r.event_type === 'deleted' && r.id === sessionId);
    expect(d.record).toMatchObject({ session_type: 'Dial', api_session_id: apiSessionId, identity_id: who.id, service_id: serviceId });

    expectSuccess(await mgmt.call('DELETE', `/api-sessions/${apiSessionId}`));
    const gone = await record('apiSession deleted', (r) => r.namespace === 'apiSession' && r.event_type === 'deleted' && r.id === apiSessionId);
    expect(gone.record).toMatchObject({ type: 'legacy', identity_id: who.id });
  });

  it('entityCount: the /summary counts, every interval', async () => {
    const summary = await mgmt.call('GET', '/summary');
    expectSuccess(summary);
    const first = await record('entityCount', (r) => r.namespace === 'entityCount');
    expect(first.subject).toBe(`${prefix()}.entityCount`);
    expectHead(first.record, 'entityCount');
    expect(Object.keys(first.record.counts).sort()).toEqual(Object.keys(summary.body.data).sort());
    expect(first.record.counts.controllers).toBe(1);
    expect(first.record.error).toBeUndefined();
    const later = await record('a later entityCount', (r) => r.namespace === 'entityCount' && r.timestamp > first.record.timestamp);
    expect(Date.parse(later.record.timestamp)).toBeGreaterThan(Date.parse(first.record.timestamp));
  });

  it('writes the same records to the JSON-lines file, one per line', async () => {
    const seen = await record('identity created', (r) => r.namespace === 'entityChange' && r.eventType === 'created');
    const lines = await eventually(
      async () => (await readFile(eventsFile, 'utf8').catch(() => '')).split('\n').filter((l) => l.length > 0),
      (ls) => ls.some((l) => l.includes(seen.record.eventId)) && new Set(ls.map((l) => (JSON.parse(l) as Rec).namespace)).size === 5,
      'the records in the file',
    );
    const parsed = lines.map((l) => JSON.parse(l) as Rec);
    expect(parsed.find((r) => r.eventId === seen.record.eventId && r.eventType === 'created')).toEqual(seen.record);
    expect(new Set(parsed.map((r) => r.namespace))).toEqual(new Set(['entityChange', 'apiSession', 'session', 'authentication', 'entityCount']));
  });
});
