import { shortId } from './ids.js';

describe('shortId', () => {
  it('is 9 characters of 0-9a-zA-Z.- and never starts with . or -', () => {
    for (let i = 0; i < 2000; i++) {
      const id = shortId();
      expect(id).toMatch(/^[0-9a-zA-Z][0-9a-zA-Z.-]{8}$/);
    }
  });

  it('does not repeat across many ids (its random bytes are refilled, never reused)', () => {
    const ids = new Set(Array.from({ length: 20_000 }, () => shortId()));
    expect(ids.size).toBe(20_000);
  });

  it('honours a length, also one longer than its random pool', () => {
    expect(shortId(12)).toHaveLength(12);
    const long = shortId(5000);
    expect(long).toMatch(/^[0-9a-zA-Z][0-9a-zA-Z.-]{4999}$/);
    expect(new Set(long).size).toBeGreaterThan(50);
  });
});
