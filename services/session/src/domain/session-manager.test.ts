import { ApiError } from '@ziti/errors';
import { CUID_PATTERN, cuid } from './cuid.js';
import type { Caller, PostureCheckResult, ServiceAccess, Session, SessionType } from './model.js';
import type { PolicyPort, PosturePort, SessionStore, TokenSigner } from './ports.js';
import { RecentKeys, SessionManager, sessionClaims } from './session-manager.js';

const ER = { name: 'er1', hostname: 'er1.example', isOnline: true, urls: { tls: 'tls://er1:3022' }, supportedProtocols: { tls: 'tls://er1:3022' }, syncStatus: 'SYNC_DONE', cost: 0, noTraversal: false, disabled: false };
const caller: Caller = { identityId: 'id1', apiSessionId: 'as1', isAdmin: false };

class MemoryStore implements Partial<SessionStore> {
  rows: Session[] = [];
  lookups = 0;
  async findExisting(a: string, s: string, t: SessionType) {
    this.lookups += 1;
    return this.find(a, s, t);
  }
  private find(a: string, s: string, t: SessionType) {
    return this.rows.find((r) => r.apiSessionId === a && r.serviceId === s && r.type === t) ?? null;
  }
  async findById(id: string) {
    return this.rows.find((r) => r.id === id) ?? null;
  }
  async insertOrGet(s: Session) {
    const existing = this.find(s.apiSessionId, s.serviceId, s.type);
    if (existing) return existing;
    this.rows.push(s);
    return s;
  }
  async deleteById(id: string) {
    const gone = this.rows.filter((r) => r.id === id);
    this.rows = this.rows.filter((r) => r.id !== id);
    return gone;
  }
  async identitiesWithPostureSessions() {
    return [...new Set(this.rows.filter((r) => r.postureCheckIds.length > 0).map((r) => r.identityId))];
  }
  async exclusively(_name: string, fn: () => Promise<void>) {
    await fn();
    return true;
  }
  async ofIdentities(ids: readonly string[], onlyWithPosture = false) {
    return this.rows.filter((r) => ids.includes(r.identityId) && (!onlyWithPosture || r.postureCheckIds.length > 0));
  }
}

function setup(access: Partial<ServiceAccess>, results: PostureCheckResult[] = []) {
  const store = new MemoryStore();
  const calls: string[] = [];
  const failures: unknown[] = [];
  const policy: PolicyPort = {
    async serviceAccess() {
      calls.push('access');
      return { visible: true, serviceName: 'svc', permissions: ['Dial'], policies: [], edgeRouters: [ER], ...access };
    },
  };
  const posture: PosturePort = {
    async evaluate(_i, _a, ids) {
      calls.push(`evaluate:${ids.join(',')}`);
      return results.filter((r) => ids.includes(r.id));
    },
    async recordFailure(req) {
      failures.push(req);
    },
  };
  const signer: TokenSigner = { sign: async (c) => `jwt.${JSON.stringify(c)}`, issuer: async () => 'https://ctrl.example:1280' };
  const manager = new SessionManager(store as unknown as SessionStore, policy, posture, signer, () => undefined, () => new Date('2026-11-22T10:00:00.000Z'));
  return { manager, store, calls, failures };
}

const code = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'OK';
  } catch (err) {
    const e = err as ApiError;
    return `${e.status} ${e.code}${e.cause?.field ? ` ${e.cause.field}` : ''}`;
  }
};

describe('POST /sessions checks, in the order of §5.4', () => {
  it('invisible service → 404, before anything else', async () => {
    const { manager } = setup({ visible: false, permissions: [], edgeRouters: [] });
    expect(await code(manager.create(caller, { serviceId: 's1' }))).toBe('404 NOT_FOUND');
    expect(await code(manager.create(caller, {}))).toBe('404 NOT_FOUND');
  });

  it('type not permitted → 400 COULD_NOT_VALIDATE on ServiceId (even when posture and routers would fail too)', async () => {
    const { manager } = setup({ permissions: ['Bind'], policies: [{ policyId: 'p', policyType: 'Bind', postureCheckIds: ['c'] }], edgeRouters: [] });
    expect(await code(manager.create(caller, { serviceId: 's1', type: 'Dial' }))).toBe('400 COULD_NOT_VALIDATE ServiceId');
    expect(await code(manager.create(caller, { serviceId: 's1', type: 'Nope' }))).toBe('400 COULD_NOT_VALIDATE type');
  });

  it('failing posture → 409 INVALID_POSTURE with the failing policies, recorded as a failed request; before the router check', async () => {
    const { manager, failures } = setup(
      { policies: [{ policyId: 'p1', policyType: 'Dial', postureCheckIds: ['c1', 'c2'] }, { policyId: 'p2', policyType: 'Bind', postureCheckIds: ['c3'] }], edgeRouters: [] },
      [
        { id: 'c1', typeId: 'OS', isPassing: false },
        { id: 'c2', typeId: 'MAC', isPassing: true },
      ],
    );
    const err = await manager.create(caller, { serviceId: 's1' }).catch((e: ApiError) => e);
    expect(err).toMatchObject({ status: 409, code: 'INVALID_POSTURE' });
    expect((err as ApiError).cause).toEqual({
      message: 'Failed to pass posture checks for service policies: [p1]',
      data: { p1: [{ id: 'c1', typeId: 'OS', isPassing: false }] },
    });
    expect(failures).toEqual([expect.objectContaining({ identityId: 'id1', serviceId: 's1', serviceName: 'svc', sessionType: 'Dial' })]);
  });

  it('any one passing policy of the type admits the session; a policy without checks passes', async () => {
    const policies = [
      { policyId: 'p1', policyType: 'Dial', postureCheckIds: ['c1'] },
      { policyId: 'p2', policyType: 'Dial', postureCheckIds: [] },
    ];
    const { manager } = setup({ policies }, [{ id: 'c1', typeId: 'OS', isPassing: false }]);
    const s = await manager.create(caller, { serviceId: 's1' });
    expect(s.servicePolicyIds).toEqual(['p2']);
  });

  it('no shared edge router → 400 NO_EDGE_ROUTERS_AVAILABLE', async () => {
    const { manager } = setup({ edgeRouters: [] });
    expect(await code(manager.create(caller, { serviceId: 's1' }))).toBe('400 NO_EDGE_ROUTERS_AVAILABLE');
  });

  it('success: a cuid id, a JWT whose jti is the id, the routers; a repeat returns the same session without asking again', async () => {
    const { manager, calls } = setup({});
    const s = await manager.create(caller, { serviceId: 's1' });
    expect(s.id).toMatch(CUID_PATTERN);
    expect(JSON.parse(s.token.slice(4))).toMatchObject({ jti: s.id, sub: 's1', z_st: 'Dial' });
    expect(s.edgeRouters).toEqual([ER]);
    const again = await manager.create(caller, { serviceId: 's1', type: 'Dial' });
    expect(again).toBe(s);
    expect(calls).toEqual(['access']);
    const bind = await manager.create(caller, { serviceId: 's1', type: 'Bind' }).catch((e: ApiError) => e.code);
    expect(bind).toBe('COULD_NOT_VALIDATE');
  });

  it('a first create is not looked up before the checks; a key this process has not seen still gets the stored session', async () => {
    const first = setup({});
    const s = await first.manager.create(caller, { serviceId: 's1' });
    expect(first.store.lookups).toBe(0);
    await first.manager.create(caller, { serviceId: 's1' });
    expect(first.store.lookups).toBe(1);
    // Another replica (or this one after a restart) with the same store: checks first, then the stored session.
    const other = setup({});
    other.store.rows = first.store.rows;
    const again = await other.manager.create(caller, { serviceId: 's1' });
    expect(again).toBe(s);
    expect(other.calls).toEqual(['access']);
    expect(other.store.rows).toHaveLength(1);
    // ... and a caller that lost access meanwhile is refused rather than handed the old session.
    const lost = setup({ visible: false });
    lost.store.rows = first.store.rows;
    expect(await code(lost.manager.create(caller, { serviceId: 's1' }))).toBe('404 NOT_FOUND');
  });
});

describe('RecentKeys', () => {
  it('keeps at most its bound, dropping the least recently added', () => {
    const keys = new RecentKeys(2);
    keys.add('a');
    keys.add('b');
    keys.add('a');
    keys.add('c');
    expect([keys.has('a'), keys.has('b'), keys.has('c')]).toEqual([true, false, true]);
  });
});

describe('session token claims (§6.4)', () => {
  it('has exactly the controller’s claims', () => {
    const claims = sessionClaims({ id: 'c1', serviceId: 's1', apiSessionId: 'as1', identityId: 'id1', type: 'Bind' }, 'https://ctrl:1280', new Date('2026-11-22T10:00:00.000Z'));
    expect(claims).toEqual({
      iss: 'https://ctrl:1280',
      sub: 's1',
      aud: ['openziti'],
      iat: 1795341600,
      exp: 1826877600,
      jti: 'c1',
      z_asid: 'as1',
      z_iid: 'id1',
      z_t: 's',
      z_st: 'Bind',
      z_leg: true,
    });
  });
});

describe('cuid', () => {
  it('is c + 24 base36 characters, unique and time-ordered', () => {
    const ids = Array.from({ length: 1000 }, (_, i) => cuid(1_800_000_000_000 + i));
    expect(ids.every((id) => CUID_PATTERN.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(1000);
    expect([...ids].sort()).toEqual(ids);
  });
});

describe('revalidation', () => {
  it('ends the sessions whose service is no longer visible or whose posture now fails', async () => {
    const { manager, store } = setup({});
    await manager.create(caller, { serviceId: 's1' });
    await manager.create({ ...caller, apiSessionId: 'as2' }, { serviceId: 's1' });
    expect(await manager.revalidateAll(['id1'])).toBe(0);
    const lost = setup({ visible: false });
    lost.store.rows = store.rows;
    expect(await lost.manager.revalidateAll(['id1'])).toBe(2);
  });
});

describe('posture re-check (timeouts)', () => {
  it('ends the sessions created under posture checks that no longer pass, and only those', async () => {
    const policies = [{ policyId: 'p1', policyType: 'Dial', postureCheckIds: ['mfa'] }];
    const passing = setup({ policies }, [{ id: 'mfa', typeId: 'MFA', isPassing: true }]);
    await passing.manager.create(caller, { serviceId: 'guarded' });
    const plain = setup({});
    await plain.manager.create(caller, { serviceId: 'open' });
    const lapsed = setup({ policies }, [{ id: 'mfa', typeId: 'MFA', isPassing: false }]);
    lapsed.store.rows = [...passing.store.rows, ...plain.store.rows];
    expect(await lapsed.manager.sweepPosture()).toBe(1);
    expect(lapsed.store.rows.map((r) => r.serviceId)).toEqual(['open']);
  });
});
