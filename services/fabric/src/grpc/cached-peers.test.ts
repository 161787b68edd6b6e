import type { Peers } from './peers.js';
import { cachedPeers } from './cached-peers.js';

function fakePeers() {
  const calls = { access: 0, terminators: 0, sessions: 0 };
  let fail = false;
  const peers = {
    getServiceAccess: async () => {
      calls.access++;
      if (fail) throw new Error('down');
      return { visible: true, serviceName: 's', permissions: ['Dial'], policies: [], edgeRouters: [] };
    },
    listServiceTerminators: async () => {
      calls.terminators++;
      return [{ id: 't1', serviceId: 's1', routerId: 'r1' }];
    },
    getSessions: async (ids: string[]) => {
      calls.sessions++;
      return ids.filter((id) => id === 'known').map((id) => ({ id, apiSessionId: 'a', identityId: 'i', serviceId: 's', type: 'Dial' }));
    },
    upsertEdgeTerminator: async () => ({ id: 't2' }),
    removeTerminators: async (r: { terminatorIds: string[] }) => r.terminatorIds,
    close: () => undefined,
  } as unknown as Peers;
  return { peers, calls, setFail: (v: boolean) => (fail = v) };
}

describe('peer answers kept for a second', () => {
  it('asks once per key within the time, again after it, and never keeps a failure', async () => {
    const f = fakePeers();
    const p = cachedPeers(f.peers, 50);
    await Promise.all([p.getServiceAccess('i', 's'), p.getServiceAccess('i', 's')]);
    await p.getServiceAccess('i', 's');
    expect(f.calls.access).toBe(1);
    await p.getServiceAccess('i', 'other');
    expect(f.calls.access).toBe(2);
    await new Promise((r) => setTimeout(r, 60));
    await p.getServiceAccess('i', 's');
    expect(f.calls.access).toBe(3);
    f.setFail(true);
    await expect(p.getServiceAccess('x', 'y')).rejects.toThrow('down');
    f.setFail(false);
    await expect(p.getServiceAccess('x', 'y')).resolves.toMatchObject({ visible: true });
  });

  it('drops a service\'s terminators when this replica changes one of them', async () => {
    const f = fakePeers();
    const p = cachedPeers(f.peers, 10_000);
    await p.listServiceTerminators('s1');
    await p.listServiceTerminators('s1');
    expect(f.calls.terminators).toBe(1);
    await p.upsertEdgeTerminator({ id: 't2', serviceId: 's1' } as never);
    await p.listServiceTerminators('s1');
    expect(f.calls.terminators).toBe(2);
    await p.removeTerminators({ routerId: 'r1', terminatorIds: ['t1'], allEdge: false });
    await p.listServiceTerminators('s1');
    expect(f.calls.terminators).toBe(3);
  });

  it('answers sessions one by one, unknown ones left out', async () => {
    const f = fakePeers();
    const p = cachedPeers(f.peers, 10_000);
    expect((await p.getSessions(['known', 'gone'])).map((s) => s.id)).toEqual(['known']);
    await p.getSessions(['known']);
    expect(f.calls.sessions).toBe(2);
  });
});
