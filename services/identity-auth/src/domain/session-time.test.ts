import { expiryOf, goTimeString, isExpired, sessionTimeoutMs } from './session-time.js';

describe('API session time', () => {
  it('defaults the timeout to 30 minutes, and falls back to it below one minute', () => {
    expect(sessionTimeoutMs(undefined)).toBe(30 * 60_000);
    expect(sessionTimeoutMs(0)).toBe(30 * 60_000);
    expect(sessionTimeoutMs(0.5)).toBe(30 * 60_000);
    expect(sessionTimeoutMs(1)).toBe(60_000);
    expect(sessionTimeoutMs(90)).toBe(90 * 60_000);
  });

  it('expires lastActivityAt + timeout, counting whole seconds left', () => {
    const last = new Date('2026-01-02T15:00:00.000Z');
    const now = new Date('2026-01-02T15:10:00.500Z');
    expect(expiryOf(last, 30 * 60_000, now)).toEqual({ expiresAt: new Date('2026-01-02T15:30:00.000Z'), expirationSeconds: 1199 });
    expect(expiryOf(last, 60_000, now).expirationSeconds).toBe(0);
    expect(isExpired(last, 30 * 60_000, now)).toBe(false);
    expect(isExpired(last, 10 * 60_000, now)).toBe(true);
  });

  it("formats the expires-at header as Go's time.String()", () => {
    expect(goTimeString(new Date('2026-01-02T15:04:05.123Z'))).toBe('2026-01-02 15:04:05.123 +0000 UTC');
    expect(goTimeString(new Date('2026-01-02T15:04:05.120Z'))).toBe('2026-01-02 15:04:05.12 +0000 UTC');
    expect(goTimeString(new Date('2026-11-30T05:04:05.000Z'))).toBe('2026-11-30 05:04:05 +0000 UTC');
  });
});
