import type { ChangeEvent } from '@ziti/messaging';
import { subscriptionsFor } from './event-stream.js';
import { toRecords } from './openziti-records.js';

/**
 * The shapes follow openziti/ziti v2.0.3: `RouterEvent` (`namespace`, `timestamp`,
 * `event_src_id`, `event_type` router-online|router-offline, `router_id`, `router_online`) and
 * `CircuitEvent` (`version` 2, `event_type`, `circuit_id`, `client_id`, `service_id`,
 * `terminator_id`, `instance_id`, `creation_timespan` omitempty, `path` {`nodes`, `links`,
 * `ingress_id`, `egress_id`, addresses omitempty}, `link_count`, `path_cost` omitempty,
 * `failure_cause` omitempty, `duration` omitempty, `tags`), filled as
 * `controller/network/circuit_lifecycle.go` fills them.
 */

const src = { controllerId: 'ctrl-1', version: 'v1.2.3' };
const occurredAt = '2026-12-01T10:00:05.000Z';
const at = '2026-12-01T10:00:01.500Z';
const ev = (type: string, data: Record<string, unknown>, source = 'fabric'): ChangeEvent => ({ id: 'evt-1', source, type, occurredAt, data });

describe('router', () => {
  it('router.connected is router-online; name, version and address are not part of the record', () => {
    const data = {
      routerId: 'JAoyjafljO',
      routerName: 'er1',
      at,
      versionInfo: { version: 'v2.0.3', revision: 'abc', buildDate: '2026-08-20', os: 'linux', arch: 'amd64' },
      remoteAddress: '10.0.0.9:50312',
    };
    const records = toRecords(ev('router.connected', data), src);
    expect(records).toEqual([{ namespace: 'router', timestamp: at, event_src_id: 'ctrl-1', event_type: 'router-online', router_id: 'JAoyjafljO', router_online: true }]);
    // The keys in the order OpenZiti's struct writes them.
    expect(Object.keys(records[0]!)).toEqual(['namespace', 'timestamp', 'event_src_id', 'event_type', 'router_id', 'router_online']);
  });

  it('router.disconnected is router-offline (the reason is not part of it)', () => {
    expect(toRecords(ev('router.disconnected', { routerId: 'r1', routerName: 'er1', at, reason: 'heartbeat timeout' }), src)).toEqual([
      { namespace: 'router', timestamp: at, event_src_id: 'ctrl-1', event_type: 'router-offline', router_id: 'r1', router_online: false },
    ]);
  });

  it("takes the event's time when `at` is missing or not a time", () => {
    expect(toRecords(ev('router.disconnected', { routerId: 'r1' }), src)[0]!.timestamp).toBe(occurredAt);
    expect(toRecords(ev('router.disconnected', { routerId: 'r1', at: 'yesterday' }), src)[0]!.timestamp).toBe(occurredAt);
  });

  it("policy's router.deleted stays an entityChange; other router types of fabric make nothing", () => {
    expect(toRecords(ev('router.deleted', { routerId: 'r1', kind: 'edge' }, 'policy'), src)[0]).toMatchObject({ namespace: 'entityChange', entityType: 'edgeRouters' });
    expect(toRecords(ev('router.deleted', { routerId: 'r1' }), src)).toEqual([]);
    expect(toRecords(ev('router.synced', { routerId: 'r1' }), src)).toEqual([]);
  });
});

describe('circuit', () => {
  const created = {
    circuitId: 'rqrucElFe',
    clientId: 'cm614ve9h00fb1xj9dfww20le',
    serviceId: '3pjMOKY2icS8fkQ1lfHmrP',
    terminatorId: '7JgrjMgEAis7V5q1wjvoB4',
    instanceId: '',
    creationTimespanNs: 1035941,
    path: { nodes: ['5g2QrZxFcw'], links: [], ingressId: '8dN7', egressId: 'ZnXG' },
    at,
  };
  const head = { namespace: 'circuit', event_src_id: 'ctrl-1', timestamp: at, version: 2 };
  const ids = { circuit_id: 'rqrucElFe', client_id: 'cm614ve9h00fb1xj9dfww20le', service_id: '3pjMOKY2icS8fkQ1lfHmrP', terminator_id: '7JgrjMgEAis7V5q1wjvoB4', instance_id: '' };
  const onePath = { nodes: ['5g2QrZxFcw'], links: null, ingress_id: '8dN7', egress_id: 'ZnXG' };

  it('circuit.created: creation_timespan in ns, the path (links null when there are none), no duration', () => {
    const [record] = toRecords(ev('circuit.created', created), src);
    expect(record).toEqual({
      ...head,
      event_type: 'created',
      ...ids,
      creation_timespan: 1035941,
      path: onePath,
      link_count: 0,
      tags: { serviceId: '3pjMOKY2icS8fkQ1lfHmrP' },
    });
    expect(Object.keys(record!)).toEqual([
      'namespace', 'event_src_id', 'timestamp', 'version', 'event_type', 'circuit_id', 'client_id', 'service_id',
      'terminator_id', 'instance_id', 'creation_timespan', 'path', 'link_count', 'tags',
    ]);
  });

  it('a multi-hop path counts its links; cost, tags and addresses pass through when fabric gives them', () => {
    const [record] = toRecords(
      ev('circuit.created', {
        ...created,
        path: { nodes: ['r1', 'r2', 'r3'], links: ['l1', 'l2'], ingressId: 'i', egressId: 'e', initiatorRemoteAddr: '10.0.0.7:5000', terminatorLocalAddr: '' },
        pathCost: 262140,
        tags: { hostId: 'IahyE.5Scw', clientId: 'haxn9lB0uc', bad: 7 },
      }),
      src,
    );
    expect(record).toMatchObject({
      path: { nodes: ['r1', 'r2', 'r3'], links: ['l1', 'l2'], ingress_id: 'i', egress_id: 'e', initiator_remote_addr: '10.0.0.7:5000' },
      link_count: 2,
      path_cost: 262140,
    });
    expect(record!.path).not.toHaveProperty('terminator_local_addr');
    // Go's encoding/json writes map keys sorted; only string values are tags.
    expect(Object.entries(record!.tags as object)).toEqual([
      ['clientId', 'haxn9lB0uc'],
      ['hostId', 'IahyE.5Scw'],
      ['serviceId', '3pjMOKY2icS8fkQ1lfHmrP'],
    ]);
  });

  it('circuit.deleted: duration in ns, no creation_timespan, no path_cost', () => {
    const [record] = toRecords(ev('circuit.deleted', { ...created, durationNs: 1535040544, pathCost: 5 }), src);
    expect(record).toEqual({ ...head, event_type: 'deleted', ...ids, path: onePath, link_count: 0, duration: 1535040544, tags: { serviceId: '3pjMOKY2icS8fkQ1lfHmrP' } });
  });

  it('circuit.failed without a circuit id or path: the cause, empty ids, a null path, no duration', () => {
    const failed = { clientId: 'cm614vrcd00fu1xj931hzepec', serviceId: '3pjMOKY2icS8fkQ1lfHmrP', instanceId: '', creationTimespanNs: 20701, failureCause: 'NO_TERMINATORS', at };
    expect(toRecords(ev('circuit.failed', failed), src)).toEqual([
      {
        ...head,
        event_type: 'failed',
        circuit_id: '',
        client_id: 'cm614vrcd00fu1xj931hzepec',
        service_id: '3pjMOKY2icS8fkQ1lfHmrP',
        terminator_id: '',
        instance_id: '',
        creation_timespan: 20701,
        path: { nodes: null, links: null, ingress_id: '', egress_id: '' },
        link_count: 0,
        failure_cause: 'NO_TERMINATORS',
        tags: { serviceId: '3pjMOKY2icS8fkQ1lfHmrP' },
      },
    ]);
  });

  it('durations given as decimal text are numbers; malformed values and fields give empty ones, never a throw', () => {
    expect(toRecords(ev('circuit.deleted', { ...created, durationNs: '86400000000000' }), src)[0]).toMatchObject({ duration: 86_400_000_000_000 });
    const [odd] = toRecords(ev('circuit.created', { circuitId: 7, serviceId: null, creationTimespanNs: -1, path: 'r1', pathCost: 1.5, tags: ['x'] }), src);
    expect(odd).toEqual({
      ...head,
      timestamp: occurredAt,
      event_type: 'created',
      circuit_id: '',
      client_id: '',
      service_id: '',
      terminator_id: '',
      instance_id: '',
      creation_timespan: 0,
      path: { nodes: null, links: null, ingress_id: '', egress_id: '' },
      link_count: 0,
      tags: { serviceId: '' },
    });
    expect(toRecords(ev('circuit.pathUpdated', created), src)).toEqual([]);
  });

  it('circuit.updated is pathUpdated: the new path and the duration so far, no creation_timespan or cost', () => {
    const [record] = toRecords(
      ev('circuit.updated', { ...created, pathCost: 9, durationNs: 2_000_000, path: { nodes: ['r1', 'r3', 'r2'], links: ['l2', 'l3'], ingressId: 'i', egressId: 'e' } }),
      src,
    );
    expect(record).toMatchObject({ event_type: 'pathUpdated', duration: 2_000_000, link_count: 2, path: { nodes: ['r1', 'r3', 'r2'], links: ['l2', 'l3'] } });
    expect(record).not.toHaveProperty('creation_timespan');
    expect(record).not.toHaveProperty('path_cost');
  });
});

describe('link', () => {
  const link = { linkId: 'l1', srcRouterId: 'r1', dstRouterId: 'r2', protocol: 'tls', dialAddress: 'tls:10.0.0.2:10080', cost: 130001, iteration: 1, state: 'Connected', at };

  it('each link event is the link record of its type, with OpenZiti\'s fields', () => {
    for (const type of ['routerLinkNew', 'routerLinkKnown', 'routerLinkDisconnectedDest', 'fault', 'duplicate']) {
      expect(toRecords(ev(`link.${type}`, link), src)).toEqual([
        {
          namespace: 'link',
          event_src_id: 'ctrl-1',
          timestamp: at,
          event_type: type,
          link_id: 'l1',
          src_router_id: 'r1',
          dst_router_id: 'r2',
          protocol: 'tls',
          dial_address: 'tls:10.0.0.2:10080',
          cost: 130001,
        },
      ]);
    }
  });

  it('leaves out what is unknown (omitempty) and makes nothing of other link events', () => {
    expect(toRecords(ev('link.fault', { linkId: 'l9', cost: 0 }), src)).toEqual([{ namespace: 'link', event_src_id: 'ctrl-1', timestamp: occurredAt, event_type: 'fault', link_id: 'l9' }]);
    expect(toRecords(ev('link.rerouted', link), src)).toEqual([]);
  });
});

describe('subscriptions of the router and circuit namespaces', () => {
  it("read fabric's events, in one subscription when both are chosen", () => {
    expect(subscriptionsFor(['router'])).toEqual([['fabric', ['router.connected', 'router.disconnected']]]);
    expect(subscriptionsFor(['circuit', 'router', 'entityCount'])).toEqual([
      ['fabric', ['circuit.created', 'circuit.deleted', 'circuit.failed', 'circuit.updated', 'router.connected', 'router.disconnected']],
    ]);
    expect(subscriptionsFor(['link'])).toEqual([['fabric', ['link.duplicate', 'link.fault', 'link.routerLinkDisconnectedDest', 'link.routerLinkKnown', 'link.routerLinkNew']]]);
  });
});
