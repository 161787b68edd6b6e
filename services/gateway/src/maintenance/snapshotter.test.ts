import type { IncomingMessage } from 'node:http';
import { ApiError } from '@ziti/errors';
import { createMemoryCache } from '@ziti/messaging';
import { SNAPSHOT_LIMIT_KEY, type Snapshotter, createSnapshotter, snapshotHandler } from './index.js';

const call = { api: 'management' as const, params: {}, req: {} as IncomingMessage };

function fakeSnapshotter(fail = false): Snapshotter & { taken: number } {
  const s = {
    taken: 0,
    async take() {
      s.taken++;
      if (fail) throw ApiError.of('TIMEOUT');
      return { path: `/snapshots/${s.taken}` };
    },
    close() {},
  };
  return s;
}

describe('POST /database/snapshot handler', () => {
  it('takes one snapshot a minute per shared cache; the raw take stays unlimited', async () => {
    const cache = createMemoryCache();
    const snapshotter = fakeSnapshotter();
    const a = snapshotHandler(snapshotter, cache, 'a');
    const b = snapshotHandler(snapshotter, cache, 'b');
    expect(await a(call)).toEqual({ body: { data: {}, meta: {} } });
    await expect(a(call)).rejects.toMatchObject({ code: 'RATE_LIMITED', status: 429 });
    await expect(b(call)).rejects.toMatchObject({ code: 'RATE_LIMITED', status: 429 });
    expect(snapshotter.taken).toBe(1);
    expect(await cache.get(SNAPSHOT_LIMIT_KEY)).toMatch(/^a /);
    // What the data integrity fix calls: no limit.
    await snapshotter.take();
    expect(snapshotter.taken).toBe(2);
    await cache.close();
  });

  it('does not use up the minute with a snapshot that failed', async () => {
    const cache = createMemoryCache();
    const failing = fakeSnapshotter(true);
    await expect(snapshotHandler(failing, cache, 'a')(call)).rejects.toMatchObject({ code: 'TIMEOUT', status: 503 });
    expect(await cache.get(SNAPSHOT_LIMIT_KEY)).toBeNull();
    const working = fakeSnapshotter();
    expect(await snapshotHandler(working, cache, 'a')(call)).toEqual({ body: { data: {}, meta: {} } });
    await cache.close();
  });

  it('answers 503 when no context is configured, and when a context cannot be reached', async () => {
    await expect(createSnapshotter({ contextGrpc: {}, snapshotDir: '/nonexistent' }).take()).rejects.toMatchObject({ status: 503 });
    const unreachable = createSnapshotter({ contextGrpc: { 'identity-auth': '127.0.0.1:1' }, snapshotDir: '/nonexistent' });
    await expect(unreachable.take()).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    unreachable.close();
  });
});
