import { createSchemaPool } from '@ziti/db-kit';
import { ApiError } from '@ziti/errors';
import { shortId, tokenHash, uuidToken, type RequestPrincipal } from '@ziti/http-kit';
import type { ApiSession } from './domain/model.js';
import type { DeletedSession } from './domain/ports.js';
import { PrismaAuthenticatorRepository } from './store/authenticator-repo.js';
import { type Database, openDatabase } from './store/db.js';
import { PrismaUnitOfWork } from './store/unit-of-work.js';
import { SCHEMA } from './schema.js';
import { Harness } from './testing/harness.js';

function newSession(identityId: string, authenticatorId: string, now = new Date()): ApiSession {
  return {
    id: shortId(),
    token: uuidToken(),
    identityId,
    authenticatorId,
    ipAddress: '127.0.0.1',
    configTypes: ['all'],
    isMfaRequired: false,
    isMfaComplete: false,
    mfaCompletedAt: null,
    isCertExtendable: false,
    isCertExtendRequested: false,
    isCertKeyRollRequested: false,
    improperClientCertChain: false,
    lastActivityAt: now,
    tags: {},
    createdAt: now,
    updatedAt: now,
  };
}

/** Counts the statements sent through the (real) pool while `fn` runs. */
async function statementsOf(db: Database, fn: () => Promise<unknown>): Promise<number> {
  const spy = jest.spyOn(db.pool, 'query');
  try {
    await fn();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

describe('logins that arrive together share their statements', () => {
  let h: Harness;
  let db: Database;
  let admin: RequestPrincipal;
  let alice: { id: string; username: string };
  let bob: { id: string; username: string };

  beforeAll(async () => {
    h = await Harness.start();
    admin = (await h.login()).principal;
    alice = await h.createUser(admin);
    bob = await h.createUser(admin);
    db = openDatabase(h.db.url);
  });
  afterAll(async () => {
    await db?.close();
    await h?.close();
  });

  const authenticatorOf = async (identityId: string) =>
    (await h.sql<{ id: string }>("SELECT id FROM authenticators WHERE identity_id = $1 AND method = 'updb'", [identityId]))[0]!.id;

  it('looks up the credentials of several usernames in one statement, answering each in order', async () => {
    const repo = new PrismaAuthenticatorRepository(db.prisma, db.pool);
    let answers: Awaited<ReturnType<typeof repo.findUpdbLogin>>[] = [];
    const statements = await statementsOf(db, async () => {
      answers = await Promise.all([alice.username, 'nobody-here', alice.username, bob.username].map((u) => repo.findUpdbLogin(u)));
    });
    expect(statements).toBe(1);
    expect(answers.map((a) => a?.identityId ?? null)).toEqual([alice.id, null, alice.id, bob.id]);
    expect(answers[0]).toMatchObject({ username: alice.username, authenticatorId: await authenticatorOf(alice.id), failedAttempts: 0 });
    expect(answers[0]!.password).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(answers[0]!.policy.id).toBe('default');
    expect(answers[0]).not.toBe(answers[2]); // one object per caller
  });

  it('keeps one generic plan for the credential lookup instead of planning it on every login', async () => {
    const one = createSchemaPool(h.db.url, SCHEMA, { max: 1 }); // one connection: the prepared statement's plan cache is observable
    try {
      const repo = new PrismaAuthenticatorRepository(db.prisma, one);
      for (let i = 0; i < 8; i++) {
        const usernames = Array.from({ length: 1 + (i % 4) }, (_, j) => (j % 2 ? bob.username : alice.username));
        const answers = await repo.findUpdbLogins(usernames);
        expect(answers.map((a) => a?.identityId)).toEqual(usernames.map((u) => (u === alice.username ? alice.id : bob.id)));
      }
      const { rows } = await one.query(`SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE '%"failed_attempts"%'`);
      expect(rows).toHaveLength(1);
      expect(Number(rows[0].generic_plans)).toBeGreaterThanOrEqual(3);
    } finally {
      await one.end();
    }
  });

  it('stores sessions created in the same turn with one statement, with the api-session.created row of each (ids only) handed to the relay', async () => {
    const handed: string[] = [];
    const uow = new PrismaUnitOfWork(db.prisma, db.pool, {
      publishOnCommit: (events, commit) => {
        handed.push(...events.map((e) => e.id));
        return commit;
      },
    });
    const sessions = [newSession(alice.id, await authenticatorOf(alice.id)), newSession(bob.id, await authenticatorOf(bob.id)), newSession(alice.id, await authenticatorOf(alice.id))];
    const since = new Date();
    const statements = await statementsOf(db, () => Promise.all(sessions.map((s) => uow.createSession(s, {}))));
    expect(statements).toBe(1);
    const stored = await h.sql('SELECT id, token, identity_id, config_types, tags FROM api_sessions WHERE id = ANY($1) ORDER BY id', [sessions.map((s) => s.id)]);
    expect(stored).toEqual(
      sessions.map((s) => ({ id: s.id, token: s.token, identity_id: s.identityId, config_types: ['all'], tags: {} })).sort((a, b) => (a.id < b.id ? -1 : 1)),
    );
    const rows = await h.sql<{ id: string; type: string; data: Record<string, unknown> }>(
      `SELECT id::text, type, data FROM outbox_events WHERE type = 'api-session.created' AND data->>'id' = ANY($1) ORDER BY data->>'id'`,
      [sessions.map((s) => s.id)],
    );
    expect(rows.map((r) => r.data)).toEqual(
      sessions.map((s) => ({ id: s.id, apiSessionId: s.id, identityId: s.identityId })).sort((a, b) => (a.id < b.id ? -1 : 1)),
    );
    expect(rows.map((r) => r.id).sort()).toEqual([...handed].sort());
    for (const s of sessions) expect(JSON.stringify(rows)).not.toContain(s.token);
    expect(await h.sql(`SELECT 1 FROM outbox_events WHERE type <> 'api-session.created' AND occurred_at >= $1`, [since])).toEqual([]);
  });

  it('fails only the login whose identity is gone when a batch breaks, and stores the others', async () => {
    const uow = new PrismaUnitOfWork(db.prisma, db.pool, { publishOnCommit: (_events, commit) => commit });
    const good = [newSession(alice.id, await authenticatorOf(alice.id)), newSession(bob.id, await authenticatorOf(bob.id))];
    const orphan = newSession('deleted-identity', 'deleted-authenticator');
    const outcomes = await Promise.allSettled([good[0]!, orphan, good[1]!].map((s) => uow.createSession(s, {})));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const reason = (outcomes[1] as PromiseRejectedResult).reason;
    expect(reason).toBeInstanceOf(ApiError);
    expect((reason as ApiError).code).toBe('INVALID_AUTH');
    const all = [...good, orphan].map((s) => s.id);
    expect((await h.sql('SELECT id FROM api_sessions WHERE id = ANY($1) ORDER BY id', [all])).map((r) => r.id)).toEqual(good.map((s) => s.id).sort());
  });

  it('stores sessions through the session-write pool, whose connections commit asynchronously, and only there', async () => {
    const uow = new PrismaUnitOfWork(db.prisma, db.pool, { publishOnCommit: (_events, commit) => commit }, db.sessionWrites);
    const sessions = [newSession(alice.id, await authenticatorOf(alice.id)), newSession(bob.id, await authenticatorOf(bob.id))];
    const writes = jest.spyOn(db.sessionWrites, 'query');
    try {
      const statements = await statementsOf(db, () => Promise.all(sessions.map((s) => uow.createSession(s, {}))));
      expect(statements).toBe(0);
      expect(writes.mock.calls).toHaveLength(1);
    } finally {
      writes.mockRestore();
    }
    expect((await h.sql('SELECT id FROM api_sessions WHERE id = ANY($1) ORDER BY id', [sessions.map((s) => s.id)])).map((r) => r.id)).toEqual(
      sessions.map((s) => s.id).sort(),
    );
    const setting = async (pool: Database['pool']) => (await pool.query('SHOW synchronous_commit')).rows[0].synchronous_commit;
    expect(await setting(db.sessionWrites)).toBe('off');
    expect(await setting(db.pool)).toBe('on');
    expect((await db.sessionWrites.query('SHOW search_path')).rows[0].search_path).toBe(`"${SCHEMA}"`);
  });

  it('writes newly reported SDK and environment info with the session', async () => {
    const uow = new PrismaUnitOfWork(db.prisma, db.pool, { publishOnCommit: (_events, commit) => commit });
    const s = newSession(bob.id, await authenticatorOf(bob.id));
    await uow.createSession(s, { sdkInfo: { type: 'ziti-sdk-golang', version: 'v1.2.3' } });
    const [row] = await h.sql('SELECT sdk_info FROM identities WHERE id = $1', [bob.id]);
    expect(row.sdk_info).toEqual({ type: 'ziti-sdk-golang', version: 'v1.2.3' });
    expect(await h.sql('SELECT id FROM api_sessions WHERE id = $1', [s.id])).toEqual([{ id: s.id }]);
  });

  it('ends the least recently active sessions of an identity beyond its bound in the same statement, with their events', async () => {
    const carol = await h.createUser(admin);
    const aid = await authenticatorOf(carol.id);
    const evicted: DeletedSession[] = [];
    const notify = jest.fn();
    const relay = { publishOnCommit: <T>(_events: unknown, commit: Promise<T>) => commit, notify };
    const uow = new PrismaUnitOfWork(db.prisma, db.pool, relay, db.pool, { maxPerIdentity: 3, evicted: async (s) => void evicted.push(...s) });
    const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000);
    const old = [newSession(carol.id, aid, at(20)), newSession(carol.id, aid, at(10)), newSession(carol.id, aid, at(5))];
    for (const s of old) await uow.createSession(s, {});
    expect(evicted).toEqual([]);
    const erin = await h.createUser(admin); // another identity in the same batch, below its bound

    const fresh = [newSession(carol.id, aid), newSession(erin.id, await authenticatorOf(erin.id)), newSession(carol.id, aid)];
    const statements = await statementsOf(db, () => Promise.all(fresh.map((s) => uow.createSession(s, {}))));
    expect(statements).toBe(1);
    expect(evicted.map((s) => s.id).sort()).toEqual([old[0]!.id, old[1]!.id].sort());
    expect(evicted.find((s) => s.id === old[0]!.id)).toEqual({ id: old[0]!.id, token: old[0]!.token, identityId: carol.id, kind: 'legacy' });
    expect(notify).toHaveBeenCalledTimes(1);
    const kept = await h.sql('SELECT id FROM api_sessions WHERE identity_id = $1 ORDER BY id', [carol.id]);
    expect(kept.map((r) => r.id)).toEqual([old[2]!.id, fresh[0]!.id, fresh[2]!.id].sort());
    expect(await h.sql('SELECT id FROM api_sessions WHERE identity_id = $1', [erin.id])).toEqual([{ id: fresh[1]!.id }]);

    const events = await h.sql("SELECT type, source, data FROM outbox_events WHERE type = 'api-session.deleted' AND data->>'identityId' = $1", [carol.id]);
    expect(events.map((e) => e.data.apiSessionId).sort()).toEqual([old[0]!.id, old[1]!.id].sort());
    expect(events.find((e) => e.data.apiSessionId === old[0]!.id)).toEqual({
      type: 'api-session.deleted', source: 'identity-auth', data: { apiSessionId: old[0]!.id, identityId: carol.id, tokenHashes: [tokenHash(old[0]!.token)] },
    });
  });

  it('ends nothing without a bound', async () => {
    const dave = await h.createUser(admin);
    const aid = await authenticatorOf(dave.id);
    const uow = new PrismaUnitOfWork(db.prisma, db.pool, { publishOnCommit: (_events, commit) => commit });
    for (let i = 0; i < 5; i++) await uow.createSession(newSession(dave.id, aid), {});
    expect((await h.sql('SELECT id FROM api_sessions WHERE identity_id = $1', [dave.id])).length).toBe(5);
  });
});
