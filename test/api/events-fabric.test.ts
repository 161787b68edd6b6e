import { randomUUID } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type ChangeEvent, createNatsBus, type EventBus } from '@ziti/messaging';
import { connect, type NatsConnection } from 'nats';
import { eventually } from '../support/clients-session.js';
import { useController } from '../support/controller.js';

/**
 * The router control plane's records: the fabric context publishes `router.*` and `circuit.*` on
 * the bus (here this test does, as fabric would), and the gateway writes OpenZiti's `router` and
 * `circuit` records on `<prefix>.router` / `<prefix>.circuit` and to the JSON-lines file.
 */

type Rec = Record<string, any>;

const eventsFile = path.join(os.tmpdir(), `ziti-events-fabric-${process.pid}-${Date.now()}.jsonl`);
const ctl = useController({ events: { namespaces: ['router', 'circuit'], file: eventsFile, entityCountIntervalMs: 60_000 } });

let bus: EventBus;
let nc: NatsConnection;
const onNats: { subject: string; record: Rec }[] = [];

beforeAll(async () => {
  const { options, infra } = ctl();
  bus = await createNatsBus({ url: infra.natsUrl, stream: options.natsStream, subjectPrefix: options.natsSubjectPrefix, name: 'fabric-test' });
  nc = await connect({ servers: infra.natsUrl });
  const sub = nc.subscribe(`${options.natsSubjectPrefix}.*`);
  void (async () => {
    for await (const m of sub) onNats.push({ subject: m.subject, record: m.json<Rec>() });
  })();
  await nc.flush();
});

afterAll(async () => {
  await nc?.drain();
  await bus?.close();
  await rm(eventsFile, { force: true });
});

const fileRecords = async (): Promise<Rec[]> =>
  (await readFile(eventsFile, 'utf8').catch(() => ''))
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Rec);

const publish = (type: string, data: Record<string, unknown>) => {
  const event: ChangeEvent = { id: randomUUID(), source: 'fabric', type, occurredAt: new Date().toISOString(), data };
  return bus.publish(event);
};

it("turns fabric's router and circuit events into OpenZiti's router and circuit records", async () => {
  const routerId = `r${Date.now()}`;
  const at = new Date().toISOString();
  await publish('router.connected', {
    routerId,
    routerName: 'er1',
    at,
    versionInfo: { version: 'v2.0.3', revision: 'abc', buildDate: '2026-08-20', os: 'linux', arch: 'amd64' },
    remoteAddress: '10.0.0.9:50312',
  });
  const circuit = { circuitId: `c${Date.now()}`, clientId: 'sess1', serviceId: 'svc1', terminatorId: 't1', instanceId: '', path: { nodes: [routerId], links: [], ingressId: 'in', egressId: 'eg' }, at };
  await publish('circuit.created', { ...circuit, creationTimespanNs: 1035941 });
  await publish('circuit.failed', { clientId: 'sess2', serviceId: 'svc1', instanceId: '', creationTimespanNs: 20701, failureCause: 'NO_TERMINATORS', at });
  await publish('circuit.deleted', { ...circuit, creationTimespanNs: 1035941, durationNs: 1535040544 });
  await publish('router.disconnected', { routerId, routerName: 'er1', at, reason: 'closed' });

  const records = await eventually(fileRecords, (rs) => rs.length >= 5, 'five records in the file');
  expect(records).toEqual(
    expect.arrayContaining([
      { namespace: 'router', timestamp: at, event_src_id: expect.any(String), event_type: 'router-online', router_id: routerId, router_online: true },
      { namespace: 'router', timestamp: at, event_src_id: expect.any(String), event_type: 'router-offline', router_id: routerId, router_online: false },
      expect.objectContaining({ namespace: 'circuit', version: 2, event_type: 'created', circuit_id: circuit.circuitId, creation_timespan: 1035941, link_count: 0 }),
      expect.objectContaining({ namespace: 'circuit', event_type: 'failed', circuit_id: '', failure_cause: 'NO_TERMINATORS', path: { nodes: null, links: null, ingress_id: '', egress_id: '' } }),
      expect.objectContaining({ namespace: 'circuit', event_type: 'deleted', circuit_id: circuit.circuitId, duration: 1535040544 }),
    ]),
  );
  expect(records).toHaveLength(5);
  const deleted = records.find((r) => r.event_type === 'deleted')!;
  expect(deleted.path).toEqual({ nodes: [routerId], links: null, ingress_id: 'in', egress_id: 'eg' });
  expect(deleted).not.toHaveProperty('creation_timespan');

  // The same records on NATS, on the subject of their namespace.
  const prefix = ctl().options.natsSubjectPrefix;
  const seen = await eventually(async () => onNats, (xs) => xs.length >= 5, 'five records on NATS');
  expect(seen.map((x) => `${x.subject} ${x.record.event_type}`).sort()).toEqual(
    [`${prefix}.circuit created`, `${prefix}.circuit deleted`, `${prefix}.circuit failed`, `${prefix}.router router-offline`, `${prefix}.router router-online`].sort(),
  );
});
