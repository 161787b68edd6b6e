import { dependencies } from '@ziti/errors';
import { type GrpcListener, healthService, startGrpcServer } from '@ziti/service-kit';
import { watchContextReadiness } from './readiness.js';

// Real gRPC servers on loopback; the poll is driven by `poll()` (the interval is far beyond the test).
describe('watchContextReadiness', () => {
  const lines: string[] = [];
  beforeAll(() => dependencies.setLog((l) => lines.push(l)));

  it('is ready while every context answers ready, not while one answers not ready or cannot be reached', async () => {
    let policyReady = true;
    const servers: GrpcListener[] = await Promise.all([
      startGrpcServer('127.0.0.1', 0, [healthService('policy', async () => policyReady)], 'policy'),
      startGrpcServer('127.0.0.1', 0, [healthService('session')], 'session'),
    ]);
    const [policy, session] = servers as [GrpcListener, GrpcListener];
    const watch = watchContextReadiness({ policy: policy.address, session: session.address }, 60_000);
    try {
      expect(watch.ready()).toBe(false); // nothing known before the first poll
      await watch.poll();
      expect(watch.ready()).toBe(true);

      policyReady = false;
      await watch.poll();
      expect([watch.ready(), watch.notReady()]).toEqual([false, ['policy']]);
      policyReady = true;
      await watch.poll();
      expect(watch.ready()).toBe(true);

      await session.stop();
      await watch.poll();
      expect([watch.ready(), watch.notReady()]).toEqual([false, ['session']]);
      await watch.poll();
      expect(lines.filter((l) => l.startsWith('dependency context policy'))).toEqual([
        'dependency context policy lost: its health check answers not ready',
        expect.stringMatching(/^dependency context policy back after \d+\.\d s; 0 failed or held back meanwhile$/),
      ]);
      expect(lines.filter((l) => l.startsWith('dependency context session'))).toEqual([expect.stringMatching(/^dependency context session lost: 14 /)]);
    } finally {
      watch.stop();
      await policy.stop();
    }
  });
});
