import type { Sample } from './load.js';
import { uncleanUnavailable } from './load.js';
import { RECOVERY_RUN, windowStats } from './report.js';

/** The fault table's arithmetic: what counts as clean, excluded, a hang, and when the service recovered. */

const UNAVAILABLE = { code: 'SERVICE_UNAVAILABLE', message: 'The service is unavailable, try again later', requestId: 'r1' };

function sample(t0: number, status: number, extra: Partial<Sample> = {}): Sample {
  return { t0, t1: t0 + 5, kind: 'service-list', gateway: 'gateway-a', status, latencyMs: 5, ...extra };
}

describe('uncleanUnavailable', () => {
  it('accepts the envelope with code, catalogue message and request id only', () => {
    expect(uncleanUnavailable('', { error: UNAVAILABLE, meta: {} })).toBeUndefined();
  });

  it('names another code, an extra field (a cause) or another message', () => {
    expect(uncleanUnavailable('', { error: { ...UNAVAILABLE, code: 'TIMEOUT' } })).toBe('code TIMEOUT');
    expect(uncleanUnavailable('', { error: { ...UNAVAILABLE, cause: { message: 'connect ECONNREFUSED 127.0.0.1:5432' } } })).toMatch(/^extra fields cause/);
    expect(uncleanUnavailable('', { error: { ...UNAVAILABLE, message: 'pool ended' } })).toBe('message "pool ended"');
    expect(uncleanUnavailable('<html>', undefined)).toMatch(/^not an error envelope/);
  });
});

describe('windowStats', () => {
  const window = { name: 'f', start: 1000, back: 2000, end: 5000 };

  it('counts 2xx, clean 503s, other statuses and hangs of the requests started in the window', () => {
    const stats = windowStats(
      [
        sample(500, 500, { code: 'UNHANDLED' }),
        sample(1000, 200),
        sample(1100, 503, { code: 'SERVICE_UNAVAILABLE' }),
        sample(1200, 503, { code: 'TIMEOUT', unclean: 'code TIMEOUT' }),
        sample(1300, 500, { code: 'UNHANDLED' }),
        sample(1400, 0, { code: 'TIMEOUT', latencyMs: 10_000 }),
        sample(1500, 0, { code: 'ECONNRESET' }),
      ],
      window,
    );
    expect(stats).toMatchObject({ requests: 6, ok: 1, unavailable: 1, hangs: 1, excluded: 0, maxLatencyMs: 10_000 });
    expect(stats.others).toEqual({ '503 TIMEOUT (unclean)': 1, '500 UNHANDLED': 1, '0 ECONNRESET': 1 });
    expect(stats.offending.map((s) => s.t0)).toEqual([1200, 1300, 1400, 1500]);
  });

  it('leaves out connection failures to the killed gateway, but not its hangs', () => {
    const stats = windowStats(
      [sample(1000, 0, { code: 'ECONNREFUSED', gateway: 'gateway-b' }), sample(1100, 0, { code: 'TIMEOUT', gateway: 'gateway-b' }), sample(1200, 200)],
      { ...window, killedGateway: 'gateway-b' },
    );
    expect(stats).toMatchObject({ requests: 2, excluded: 1, hangs: 1 });
  });

  it('measures recovery from the return to the first of RECOVERY_RUN consecutive 2xx', () => {
    const after = [sample(2100, 503, { code: 'SERVICE_UNAVAILABLE' }), ...Array.from({ length: RECOVERY_RUN }, (_, i) => sample(2500 + i, 200))];
    expect(windowStats([sample(1500, 503, { code: 'SERVICE_UNAVAILABLE' }), ...after], window).recoveryMs).toBe(500);
    const broken = Array.from({ length: RECOVERY_RUN + 2 }, (_, i) => sample(2000 + i, i === RECOVERY_RUN - 1 ? 503 : 200, { code: 'SERVICE_UNAVAILABLE' }));
    expect(windowStats(broken, window).recoveryMs).toBeUndefined();
  });
});
