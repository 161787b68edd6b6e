import { readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { auth } from '../support/clients.js';
import { eventually, networkBuilder } from '../support/clients-session.js';
import { useController } from '../support/controller.js';

/**
 * The event stream of the embedded mode: in-process bus and cache (no NATS), records only in the
 * JSON-lines file (`ZITI_EVENTS_FILE`).
 */

type Rec = Record<string, any>;

const eventsFile = path.join(os.tmpdir(), `ziti-events-embedded-${process.pid}-${Date.now()}.jsonl`);
const ctl = useController({
  natsUrl: undefined,
  redisUrl: undefined,
  events: { namespaces: ['entityChange', 'authentication', 'entityCount'], file: eventsFile, entityCountIntervalMs: 60_000 },
});

const fileRecords = async (): Promise<Rec[]> =>
  (await readFile(eventsFile, 'utf8').catch(() => ''))
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Rec);

afterAll(async () => {
  await rm(eventsFile, { force: true });
});

it('appends the chosen namespaces to the file, one JSON record per line, without NATS', async () => {
  const mgmt = await ctl().adminSession('management');
  const who = await networkBuilder(mgmt).identity();
  expect((await auth.login(ctl().http, who.username, `${who.password}-wrong`, 'client')).res.status).toBe(401);
  expect((await auth.login(ctl().http, who.username, who.password, 'client')).res.status).toBe(200);

  const records = await eventually(
    fileRecords,
    (rs) =>
      rs.some((r) => r.namespace === 'entityChange' && r.eventType === 'created' && r.finalState?.id === who.id) &&
      rs.some((r) => r.namespace === 'authentication' && r.event_type === 'fail' && r.identity_id === who.id) &&
      rs.some((r) => r.namespace === 'authentication' && r.event_type === 'success' && r.identity_id === who.id) &&
      rs.some((r) => r.namespace === 'entityCount'),
    'the records in the file',
  );
  // apiSession and session are not chosen: none of them is written.
  expect(new Set(records.map((r) => r.namespace))).toEqual(new Set(['entityChange', 'authentication', 'entityCount']));
  // The first count is taken at start: the default admin alone.
  expect(records.find((r) => r.namespace === 'entityCount')!.counts).toMatchObject({ identities: 1, controllers: 1 });
});
