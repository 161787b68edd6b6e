import { IDS_PER_EVENT, RDM_CHANGES_PER_EVENT, toChangeEvents } from './events.js';

describe('policy events', () => {
  it('merges the affected identities per cause and splits them into events of at most 1000 ids', () => {
    const ids = Array.from({ length: 2500 }, (_, i) => `i${String(i).padStart(5, '0')}`);
    const events = toChangeEvents([
      { type: 'service-access.changed', identityIds: ids.slice(0, 2000), cause: 'service-policy' },
      { type: 'service-access.changed', identityIds: ids.slice(1500), cause: 'service-policy' },
      { type: 'service-access.changed', identityIds: ['x'], cause: 'service' },
      { type: 'service-access.changed', identityIds: [], cause: 'config' },
    ]);
    const sp = events.filter((e) => e.data.cause === 'service-policy');
    expect(sp.map((e) => (e.data.identityIds as string[]).length)).toEqual([IDS_PER_EVENT, IDS_PER_EVENT, 500]);
    expect(new Set(sp.flatMap((e) => e.data.identityIds as string[])).size).toBe(2500);
    expect(new Set(events.map((e) => e.data.changedAt)).size).toBe(1);
    expect(events.filter((e) => e.data.cause === 'service')).toHaveLength(1);
    expect(events.every((e) => e.type === 'service-access.changed' && e.source === 'policy')).toBe(true);
  });

  it('announces deleted routers', () => {
    const [e] = toChangeEvents([{ type: 'router.deleted', routerId: 'r1', kind: 'edge' }]);
    expect(e).toMatchObject({ type: 'router.deleted', source: 'policy', data: { routerId: 'r1', kind: 'edge' } });
  });

  it('publishes the router data model changes of a transaction once each, sorted, at most 1000 per event', () => {
    const many = Array.from({ length: 1500 }, (_, i) => ({ kind: 'identity' as const, id: `i${String(i).padStart(5, '0')}` }));
    const events = toChangeEvents([
      { type: 'router-data-model.changed', changes: [{ kind: 'service', id: 's1' }, ...many.slice(0, 1000)] },
      { type: 'router-data-model.changed', changes: [{ kind: 'config', id: 'c1' }, { kind: 'service', id: 's1' }, ...many.slice(500)] },
    ]);
    expect(events.every((e) => e.type === 'router-data-model.changed' && e.source === 'policy')).toBe(true);
    const changes = events.map((e) => e.data.changes as { kind: string; id: string }[]);
    expect(changes.map((c) => c.length)).toEqual([RDM_CHANGES_PER_EVENT, 502]);
    expect(changes[0][0]).toEqual({ kind: 'config', id: 'c1' });
    expect(changes[1].at(-1)).toEqual({ kind: 'service', id: 's1' });
    expect(changes.flat()).toHaveLength(1502);
  });
});
