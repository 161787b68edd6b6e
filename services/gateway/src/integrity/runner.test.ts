import { createMemoryCache } from '@ziti/messaging';
import { status } from '@grpc/grpc-js';
import type { UpstreamOwner } from '../service.js';
import { type IntegrityPeer, PeerError } from './peers.js';
import { IntegrityRunner } from './runner.js';
import { LEASE_KEY } from './state.js';

type Calls = { method: string; req: any }[];

/** A context answering from tables: own findings, references it holds, ids it owns, projection sources. */
function fakePeer(name: string, calls: Calls, over: Partial<IntegrityPeer> = {}): IntegrityPeer {
  const log = (method: string, req: unknown) => calls.push({ method: `${name}.${method}`, req });
  return {
    checkIntegrity: async (req) => (log('checkIntegrity', req), { results: [{ description: `${name}: own`, fixed: req.fix }], tooMany: false }),
    listReferences: async (req) => (log('listReferences', req), { ids: [] }),
    existingIds: async (req) => (log('existingIds', req), { ids: req.ids }),
    repairReferences: async (req) => (log('repairReferences', req), { results: req.ids.map((id) => ({ description: `${name}: gone ${id}`, fixed: req.fix })), tooMany: false }),
    listProjectionSources: async (req) => (log('listProjectionSources', req), { identities: [], postureChecks: [] }),
    checkProjection: async (req) => (log('checkProjection', req), { results: [], tooMany: false }),
    close: () => undefined,
    ...over,
  };
}

async function ended(runner: IntegrityRunner) {
  for (let i = 0; i < 200; i++) {
    const r = await runner.results();
    if (!r.data.inProgress) return r.data;
    await new Promise((res) => setTimeout(res, 5));
  }
  throw new Error('the run did not end');
}

const ALL: UpstreamOwner[] = ['identity-auth', 'pki-enrollment', 'policy', 'session', 'posture'];

describe('IntegrityRunner', () => {
  it('refuses a second start while the lease is held, and frees it when the run ends', async () => {
    const cache = createMemoryCache();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const runner = new IntegrityRunner({ cache, peers: {}, log: () => undefined, stepHook: () => gate });
    await cache.set(LEASE_KEY, 'someone-else', 30);
    await expect(runner.start(false)).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    await cache.del(LEASE_KEY);
    const calls: Calls = [];
    const held = new IntegrityRunner({ cache, peers: { policy: fakePeer('policy', calls) }, log: () => undefined, stepHook: () => gate });
    await held.start(false);
    await expect(runner.start(true)).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    expect((await runner.results()).data).toMatchObject({ inProgress: true, results: [{ description: 'policy: own', fixed: false }] });
    release();
    expect(await ended(runner)).toMatchObject({ inProgress: false, error: null });
    expect(await cache.get(LEASE_KEY)).toBeNull();
  });

  it('takes the snapshot before asking any context to fix, and asks none when there is no snapshot or it fails', async () => {
    const calls: Calls = [];
    const order: string[] = [];
    const peers = Object.fromEntries(ALL.map((n) => [n, fakePeer(n, calls)]));
    const ok = new IntegrityRunner({ cache: createMemoryCache(), peers, log: () => undefined, takeSnapshot: async () => void order.push(`snapshot@${calls.length}`) });
    await ok.start(true);
    expect(await ended(ok)).toMatchObject({ fixingErrors: true, error: null });
    expect(order).toEqual(['snapshot@0']);
    expect(calls.filter((c) => c.method.endsWith('.checkIntegrity')).every((c) => c.req.fix === true)).toBe(true);

    for (const takeSnapshot of [undefined, async () => Promise.reject(new Error('disk full'))]) {
      calls.length = 0;
      const runner = new IntegrityRunner({ cache: createMemoryCache(), peers, log: () => undefined, takeSnapshot });
      await runner.start(true);
      const data = await ended(runner);
      expect(data.results).toEqual([]);
      expect(data.error).toMatch(/nothing was repaired/);
      expect(calls).toEqual([]);
    }
  });

  it('asks the owner which referenced ids exist and repairs only the gone ones, page by page', async () => {
    const calls: Calls = [];
    const held = Array.from({ length: 700 }, (_, i) => `id${String(i).padStart(4, '0')}`);
    const session = fakePeer('session', calls, {
      listReferences: async (req) => {
        calls.push({ method: 'session.listReferences', req });
        if (req.kind !== 'api-session') return { ids: [] };
        return { ids: held.filter((id) => id > req.after).slice(0, req.limit) };
      },
    });
    const identityAuth = fakePeer('identity-auth', calls, {
      existingIds: async (req) => (calls.push({ method: 'identity-auth.existingIds', req }), { ids: req.ids.filter((id) => id !== 'id0003' && id !== 'id0600') }),
    });
    const runner = new IntegrityRunner({ cache: createMemoryCache(), peers: { session, 'identity-auth': identityAuth }, log: () => undefined });
    await runner.start(false);
    const data = await ended(runner);
    expect(data.results.map((r) => r.description).filter((d) => d.includes('gone'))).toEqual(['session: gone id0003', 'session: gone id0600']);
    const pages = calls.filter((c) => c.method === 'session.listReferences' && c.req.kind === 'api-session').map((c) => c.req.after);
    expect(pages).toEqual(['', 'id0499']);
    expect(calls.filter((c) => c.method === 'session.repairReferences').map((c) => c.req.ids)).toEqual([['id0003'], ['id0600']]);
  });

  it('hands the holder each page of projection sources with its id range, the last page unbounded', async () => {
    const calls: Calls = [];
    const sources = Array.from({ length: 501 }, (_, i) => ({ identityId: `i${String(i).padStart(4, '0')}` }));
    const identityAuth = fakePeer('identity-auth', calls, {
      listProjectionSources: async (req) => ({ identities: sources.filter((s) => s.identityId > req.after).slice(0, req.limit) as any, postureChecks: [] }),
    });
    const policy = fakePeer('policy', calls);
    const runner = new IntegrityRunner({ cache: createMemoryCache(), peers: { 'identity-auth': identityAuth, policy }, log: () => undefined });
    await runner.start(false);
    await ended(runner);
    const checks = calls.filter((c) => c.method === 'policy.checkProjection').map((c) => ({ after: c.req.after, until: c.req.until, n: c.req.identities.length }));
    expect(checks).toEqual([
      { after: '', until: 'i0499', n: 500 },
      { after: 'i0499', until: '', n: 1 },
    ]);
  });

  it('records the first failing context as the error and still runs the other steps; UNIMPLEMENTED is no error', async () => {
    const calls: Calls = [];
    const broken = fakePeer('pki-enrollment', calls, { checkIntegrity: async () => Promise.reject(new PeerError(status.UNAVAILABLE, 'connection refused')) });
    const quiet = fakePeer('posture', calls, { checkIntegrity: async () => Promise.reject(new PeerError(status.UNIMPLEMENTED, 'no')) });
    const runner = new IntegrityRunner({ cache: createMemoryCache(), peers: { 'pki-enrollment': broken, posture: quiet, policy: fakePeer('policy', calls) }, log: () => undefined });
    await runner.start(false);
    const data = await ended(runner);
    expect(data.error).toBe('pki-enrollment: UNAVAILABLE: connection refused');
    expect(data.results).toEqual([{ description: 'policy: own', fixed: false }]);
  });
});
