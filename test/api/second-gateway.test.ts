import { auth, EdgeApi } from '../support/clients.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectEmpty, expectError, expectList, expectSuccess } from '../support/envelope.js';
import { startSecondGateway, type SecondGateway } from '../support/second-gateway.js';

/**
 * Two gateway replicas sharing Redis, NATS, the internal secret and the services (design §8):
 * a session created through A works through B, and once deleted through A it fails through B on
 * the very next request, even though B had it cached.
 */

const ctl = useController();
failOnConformanceProblems();

let b: SecondGateway;
beforeAll(async () => {
  b = await startSecondGateway(ctl());
}, 60_000);
afterAll(async () => {
  await b?.stop();
});

/** Logs in through gateway A; returns the session on A and the same token on B. */
async function loginThroughA(): Promise<{ onA: EdgeApi; onB: EdgeApi; id: string }> {
  const { res, session } = await auth.login(ctl().http, ctl().admin.username, ctl().admin.password, 'management');
  expectSuccess(res);
  return { onA: session, onB: new EdgeApi(b.http, 'management', session.token), id: res.body.data.id };
}

it('gateway B serves the same API with the same CA', async () => {
  expect(b.url).not.toBe(ctl().url);
  expectSuccess(await b.http.get('/edge/management/v1/version'));
});

it('a token issued through A works through B (repeatedly, so B caches it)', async () => {
  const { onB } = await loginThroughA();
  for (let i = 0; i < 3; i++) {
    const me = await onB.currentIdentity.get();
    expectSuccess(me);
    expect(me.body.data.isDefaultAdmin).toBe(true);
    expectList(await onB.identities.list());
  }
});

it('DELETE /api-sessions/{id} through A → the token fails through B on the very next request', async () => {
  const admin = await ctl().adminSession('management');
  const victim = await loginThroughA();
  for (let i = 0; i < 3; i++) expectSuccess(await victim.onB.currentIdentity.get());
  expectEmpty(await admin.apiSessions.delete(victim.id));
  for (let i = 0; i < 3; i++) {
    expectError(await victim.onB.currentIdentity.get(), 401, 'UNAUTHORIZED');
    expectError(await victim.onB.identities.list(), 401, 'UNAUTHORIZED');
  }
  expectError(await victim.onA.currentIdentity.get(), 401, 'UNAUTHORIZED');
});

it('logout through A → the token fails through B on the very next request', async () => {
  const victim = await loginThroughA();
  for (let i = 0; i < 3; i++) expectSuccess(await victim.onB.currentApiSession.get());
  expectEmpty(await victim.onA.currentApiSession.delete());
  for (let i = 0; i < 3; i++) expectError(await victim.onB.currentApiSession.get(), 401, 'UNAUTHORIZED');
});

it('logout through B → the token fails through A on the very next request', async () => {
  const victim = await loginThroughA();
  for (let i = 0; i < 3; i++) expectSuccess(await victim.onA.currentIdentity.get());
  expectEmpty(await victim.onB.currentApiSession.delete());
  for (let i = 0; i < 3; i++) expectError(await victim.onA.currentIdentity.get(), 401, 'UNAUTHORIZED');
});

it('an identity created through B is visible through A at once', async () => {
  const admin = await ctl().adminSession('management');
  const onB = new EdgeApi(b.http, 'management', admin.token);
  const created = await onB.identities.create({ name: `via-b-${Date.now()}`, type: 'Default', isAdmin: false });
  expectSuccess(created, 201);
  expectSuccess(await admin.identities.get(created.body.data.id));
});
