import { status, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { FabricServiceService, type GetRouterStatesRequest } from '@ziti/proto';
import { type GrpcListener, startGrpcServer } from '@ziti/service-kit';
import type { Router } from '../domain/model.js';
import { commonEdgeRouter, currentIdentityEdgeRouter, edgeRouterDetail, fabricRouterDetail, routerDetail } from '../http/views.js';
import { liveEdgeRouterRefs } from './fabric-calls.js';
import { fabricRouterStates } from './fabric-client.js';

const router = (id: string): Router => ({
  id, name: id, kind: 'edge', fingerprint: null, cost: 7, noTraversal: false, disabled: false, ctrlChanListeners: {}, roleAttributes: [],
  isTunnelerEnabled: false, appData: {}, configs: [], tags: {}, createdAt: new Date('2026-01-01T00:00:00Z'), updatedAt: new Date('2026-01-01T00:00:00Z'),
});

const ONLINE = {
  routerId: 'er-on', connected: true, isOnline: true, syncStatus: 'SYNC_DONE', hostname: 'er.example',
  supportedProtocols: { tls: 'tls://er.example:3022', ws: 'ws://er.example:3023' },
  versionInfo: { version: 'v2.0.3', revision: 'r1', buildDate: '2026-01-02', os: 'linux', arch: 'arm64' },
  listenerAddresses: ['tls:er.example:6000'], connectedAt: '2026-01-03T00:00:00.000Z',
};
const OFFLINE = { routerId: 'er-off', connected: false, isOnline: false, syncStatus: 'SYNC_DISCONNECTED', hostname: '', supportedProtocols: {}, listenerAddresses: [], connectedAt: '' };

/** A FabricService answering fixed router states (or UNIMPLEMENTED), counting its calls. */
async function fakeFabric(mode: 'states' | 'unimplemented') {
  const calls: string[][] = [];
  const server = await startGrpcServer('127.0.0.1', 0, [
    {
      definition: FabricServiceService,
      implementation: {
        getRouterStates: (c: { request: GetRouterStatesRequest }, cb: (e: unknown, r?: unknown) => void) => {
          calls.push(c.request.routerIds);
          if (mode === 'unimplemented') return cb({ code: status.UNIMPLEMENTED, details: 'not served' });
          cb(null, { states: c.request.routerIds.map((id) => (id === 'er-on' ? ONLINE : { ...OFFLINE, routerId: id })) });
        },
      } as unknown as UntypedServiceImplementation,
    },
  ], 'fabric');
  return { server, calls };
}

describe('routers rendered with the live state of FabricService', () => {
  const servers: GrpcListener[] = [];
  const logs: string[] = [];
  afterAll(() => Promise.all(servers.map((s) => s.stop())));

  it('renders a connected router online with its hostname, protocols and version, one call for the page', async () => {
    const fake = await fakeFabric('states');
    servers.push(fake.server);
    const states = fabricRouterStates(fake.server.address, (m) => logs.push(m));
    const live = await states.get(['er-on', 'er-off', 'er-on']);
    expect(fake.calls).toEqual([['er-on', 'er-off']]);
    const on = live.get('er-on');
    expect(edgeRouterDetail(router('er-on'), undefined, on)).toMatchObject({
      isOnline: true, syncStatus: 'SYNC_DONE', hostname: 'er.example', supportedProtocols: ONLINE.supportedProtocols,
      version: 'v2.0.3', revision: 'r1', buildDate: '2026-01-02', os: 'linux', arch: 'arm64', versionInfo: ONLINE.versionInfo,
    });
    expect(fabricRouterDetail(router('er-on'), undefined, on)).toMatchObject({
      connected: true, listenerAddresses: [{ address: 'tls:er.example:6000', protocol: 'tls' }], versionInfo: ONLINE.versionInfo,
    });
    expect(routerDetail('routers', router('er-on'), undefined, on).isOnline).toBe(true);
    expect(currentIdentityEdgeRouter(router('er-on'), on)).toMatchObject({ isOnline: true, hostname: 'er.example' });
    // A router fabric reports disconnected: offline, no version, no listeners.
    const off = live.get('er-off');
    expect(commonEdgeRouter(router('er-off'), off)).toMatchObject({ isOnline: false, syncStatus: 'SYNC_DISCONNECTED', hostname: '', supportedProtocols: {} });
    const fab = fabricRouterDetail(router('er-off'), undefined, off);
    expect(fab).toMatchObject({ connected: false, listenerAddresses: null });
    expect(fab).not.toHaveProperty('versionInfo');
    expect(edgeRouterDetail(router('er-off'), undefined, off).versionInfo).toEqual({ version: '', revision: '', buildDate: '', os: '', arch: '' });
    // Session access: urls are the supported protocols (what SDKs dial).
    const refs = await liveEdgeRouterRefs(states, [{ id: 'er-on', name: 'er-on', cost: 1, noTraversal: false, disabled: false }]);
    expect(refs).toEqual([{ id: 'er-on', name: 'er-on', hostname: 'er.example', isOnline: true, urls: ONLINE.supportedProtocols, supportedProtocols: ONLINE.supportedProtocols, syncStatus: 'SYNC_DONE', cost: 1, noTraversal: false, disabled: false }]);
    states.close();
  });

  it('renders offline, without failing, when fabric is not configured, unreachable or does not serve the call (not asked again for a while)', async () => {
    const none = fabricRouterStates(undefined, (m) => logs.push(m));
    expect((await none.get(['er-on'])).size).toBe(0);
    await none.disconnect('er-on', 'deleted');

    const fake = await fakeFabric('unimplemented');
    servers.push(fake.server);
    const unimplemented = fabricRouterStates(() => fake.server.address, (m) => logs.push(m));
    expect((await unimplemented.get(['er-on'])).size).toBe(0);
    expect((await unimplemented.get(['er-on'])).size).toBe(0);
    expect(fake.calls).toHaveLength(1);
    unimplemented.close();

    const gone = await fakeFabric('states');
    const address = gone.server.address;
    await gone.server.stop();
    const unreachable = fabricRouterStates(address, (m) => logs.push(m));
    expect((await unreachable.get(['er-on'])).size).toBe(0);
    await unreachable.disconnect('er-on', 'disabled');
    expect(commonEdgeRouter(router('er-on'), (await unreachable.get(['er-on'])).get('er-on'))).toMatchObject({ isOnline: false, syncStatus: 'SYNC_UNKNOWN' });
    unreachable.close();
    expect(logs.some((m) => m.includes('GetRouterStates'))).toBe(true);
  });
});
