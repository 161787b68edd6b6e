import { createInProcessBus, createMemoryCache } from '@ziti/messaging';
import { type RunningEventStream, startEventStream } from './event-stream.js';

describe('entityCount', () => {
  it('is counted once per period across replicas sharing the cache, first at start', async () => {
    const cache = createMemoryCache();
    const bus = createInProcessBus();
    const interval = 1000;
    const slots: number[] = [];
    let reached: () => void = () => undefined;
    const threeCounts = new Promise<void>((resolve) => (reached = resolve));
    const countEntities = async () => {
      slots.push(Math.floor(Date.now() / interval));
      if (slots.length === 3) reached();
      return { identities: 1 };
    };
    const replicas: RunningEventStream[] = [];
    for (const id of ['replica-a', 'replica-b']) {
      replicas.push(
        await startEventStream({
          namespaces: ['entityCount'],
          entityCountIntervalMs: interval,
          bus,
          sharedCache: cache,
          source: { controllerId: id, version: 'v1' },
          countEntities,
          log: () => undefined,
        }),
      );
    }
    try {
      await threeCounts;
      expect(new Set(slots).size).toBe(slots.length);
    } finally {
      await Promise.all(replicas.map((r) => r.stop()));
      await bus.close();
      await cache.close();
    }
  });
});
