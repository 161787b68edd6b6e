import { ApiError } from '@ziti/errors';
import { ALL_TRACE_CHANNELS, parseGoDuration, traceOfSpec } from './trace.js';

describe('parseGoDuration (Go time.ParseDuration)', () => {
  it.each([
    ['0', 0], ['10m', 600_000], ['1h30m', 5_400_000], ['1.5h', 5_400_000], ['300ms', 300], ['-2s', -2000], ['+5s', 5000],
    ['1us', 0.001], ['1µs', 0.001], ['2h45m30.5s', 9_930_500], ['.5s', 500], ['5.s', 5000], ['1000000ns', 1],
  ])('%s = %d ms', (s, ms) => {
    expect(parseGoDuration(s)).toBeCloseTo(ms, 6);
  });

  it.each([
    ['', 'time: invalid duration ""'],
    ['abc', 'time: invalid duration "abc"'],
    ['10', 'time: missing unit in duration "10"'],
    ['10d', 'time: unknown unit "d" in duration "10d"'],
    ['1h-5m', 'time: unknown unit "h-" in duration "1h-5m"'],
    ['-', 'time: invalid duration "-"'],
    ['.h', 'time: invalid duration ".h"'],
    ['3000000h', 'time: invalid duration "3000000h"'],
    ['9223372036854775808ns', 'time: invalid duration "9223372036854775808ns"'],
  ])('refuses %j', (s, message) => {
    expect(() => parseGoDuration(s)).toThrow(message);
  });

  it('takes the largest Go duration', () => {
    expect(parseGoDuration('9223372036854775807ns')).toBeCloseTo(9_223_372_036_854.775807, 3);
  });
});

describe('traceOfSpec', () => {
  const now = Date.parse('2026-01-02T03:04:05.000Z');

  it('is null unless enabled', () => {
    expect(traceOfSpec({}, now)).toBeNull();
    expect(traceOfSpec({ enabled: false, duration: 'nonsense' }, now)).toBeNull();
  });

  it('runs for the duration, generates a trace id when none is given, traces every channel by default', () => {
    const t = traceOfSpec({ enabled: true, duration: '10m' }, now)!;
    expect(t.until.toISOString()).toBe('2026-01-02T03:14:05.000Z');
    expect(t.traceId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(t.channels).toEqual(ALL_TRACE_CHANNELS);
    expect(traceOfSpec({ enabled: true, duration: '1s', traceId: 'mine', channels: ['selectPath', 'selectPath'] }, now)).toMatchObject({ traceId: 'mine', channels: ['selectPath'] });
    expect(traceOfSpec({ enabled: true, duration: '1s', channels: ['x', 'all'] }, now)!.channels).toEqual(ALL_TRACE_CHANNELS);
  });

  it('a bad or missing duration is 400 on duration with Go\'s message', () => {
    for (const duration of [undefined, '', '5 minutes']) {
      let err: unknown;
      try {
        traceOfSpec({ enabled: true, duration }, now);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ApiError);
      expect(err).toMatchObject({ code: 'COULD_NOT_VALIDATE', cause: { field: 'duration' } });
    }
  });
});
