import { ctrlPb } from '@ziti/channel';
import { MIN_ROUTER_COST, SMART_REROUTE_ATTEMPT, routeMessages, shortestPath } from './paths.js';

const routers = (spec: Record<string, { cost?: number; noTraversal?: boolean }>) => (id: string) => (spec[id] ? { cost: spec[id]!.cost ?? 0, noTraversal: spec[id]!.noTraversal ?? false } : undefined);

describe('paths', () => {
  it('one router is a path of its own; unconnected ends have none', () => {
    const r = routers({ a: {} });
    expect(shortestPath('a', 'a', [], r)).toEqual({ routers: ['a'], links: [], cost: 0 });
    expect(shortestPath('a', 'b', [], r)).toBeUndefined();
    expect(shortestPath('a', 'b', [{ id: 'l1', src: 'a', dst: 'b', cost: 1 }], r)).toBeUndefined();
  });

  it('crosses links in either direction and weighs link cost plus max(router cost, the minimum)', () => {
    const r = routers({ a: {}, b: { cost: 50 }, c: {}, d: {} });
    const links = [
      { id: 'ab', src: 'a', dst: 'b', cost: 1 },
      { id: 'bd', src: 'd', dst: 'b', cost: 1 },
      { id: 'ac', src: 'c', dst: 'a', cost: 20 },
      { id: 'cd', src: 'c', dst: 'd', cost: 20 },
    ];
    // via b: 1 + 50 + 1 + 10 = 62; via c: 20 + 10 + 20 + 10 = 60
    expect(shortestPath('a', 'd', links, r)).toEqual({ routers: ['a', 'c', 'd'], links: ['ac', 'cd'], cost: 60 });
    const cheapB = routers({ a: {}, b: { cost: 5 }, c: {}, d: {} });
    expect(shortestPath('a', 'd', links, cheapB)).toEqual({ routers: ['a', 'b', 'd'], links: ['ab', 'bd'], cost: 1 + MIN_ROUTER_COST + 1 + MIN_ROUTER_COST });
  });

  it('takes the cheapest of parallel links and never traverses a noTraversal router', () => {
    const links = [
      { id: 'slow', src: 'a', dst: 'b', cost: 100 },
      { id: 'fast', src: 'b', dst: 'a', cost: 3 },
      { id: 'bc', src: 'b', dst: 'c', cost: 1 },
    ];
    expect(shortestPath('a', 'c', links, routers({ a: {}, b: {}, c: {} }))?.links).toEqual(['fast', 'bc']);
    expect(shortestPath('a', 'c', links, routers({ a: {}, b: { noTraversal: true }, c: {} }))).toBeUndefined();
    // a noTraversal router may still be an end
    expect(shortestPath('a', 'b', links, routers({ a: {}, b: { noTraversal: true } }))?.routers).toEqual(['a', 'b']);
  });

  it('lays routes out as OpenZiti does: ingress to the first link, link to link, the last link to the egress', () => {
    const ids = { circuitId: 'c1', ingressId: 'in', egressId: 'out', attempt: 0, timeoutNs: 10e9, tags: { serviceId: 's' } };
    const target = { binding: 'edge', destination: 'term', peerData: {} };
    const fw = (r: { route: ctrlPb.Route }) => r.route.forwards.map((f) => `${f.srcAddress}>${f.dstAddress}:${f.dstType}`);
    const [one] = routeMessages({ routers: ['a'], links: [] }, ids, target);
    expect(fw(one!)).toEqual(['in>out:1', 'out>in:0']);
    expect(one!.route.egress).toMatchObject({ binding: 'edge', address: 'out', destination: 'term' });
    const three = routeMessages({ routers: ['a', 'b', 'c'], links: ['l1', 'l2'] }, ids, target);
    expect(three.map((m) => m.routerId)).toEqual(['a', 'b', 'c']);
    expect(three.map(fw)).toEqual([['in>l1:2', 'l1>in:0'], ['l1>l2:2', 'l2>l1:2'], ['out>l2:2', 'l2>out:1']]);
    expect(three.map((m) => m.route.egress?.address)).toEqual([undefined, undefined, 'out']);
    // a reroute keeps the egress where it is
    const again = routeMessages({ routers: ['a', 'c'], links: ['l3'] }, { ...ids, attempt: SMART_REROUTE_ATTEMPT }, target);
    expect(again[1]!.route.egress).toBeUndefined();
  });
});
