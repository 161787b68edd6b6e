import { compileFilter, durableName, filterSubject, RecentIds, typeMatches } from './subjects.js';

describe('subjects', () => {
  it.each([
    ['identity.*', 'identity.deleted', true],
    ['identity.*', 'identity.role.changed', false],
    ['identity.>', 'identity.role.changed', true],
    ['identity.>', 'identity', false],
    ['api-session.deleted', 'api-session.deleted', true],
    ['api-session.deleted', 'api-session.deleted.x', false],
    ['*.deleted', 'identity.deleted', true],
    ['>', 'anything.at.all', true],
  ])('type pattern %s vs %s → %s', (pattern, type, expected) => {
    expect(typeMatches(pattern, type)).toBe(expected);
  });

  it('uses one NATS filter subject per consumer: exact for one type, source-wide otherwise', () => {
    expect(filterSubject('p', compileFilter('identity-auth', ['identity.*']))).toBe('p.identity-auth.identity.*');
    expect(filterSubject('p', compileFilter('*', ['a.b', 'c']))).toBe('p.*.>');
  });

  it('derives NATS-legal durable names that separate selections, not replicas', () => {
    const f = compileFilter('identity-auth', ['identity.*', 'api-session.deleted']);
    const name = durableName('policy.service v2', f);
    expect(name).toMatch(/^policy_service_v2__identity-auth__[0-9a-f]{10}$/);
    expect(durableName('policy.service v2', compileFilter('identity-auth', ['api-session.deleted', 'identity.*']))).toBe(name);
    expect(durableName('policy.service v2', compileFilter('identity-auth', ['identity.*']))).not.toBe(name);
    expect(durableName('g', compileFilter('*', ['x']))).toMatch(/^g__all__/);
  });

  it('remembers a bounded number of recent ids', () => {
    const r = new RecentIds(2);
    expect([r.add('a'), r.add('a'), r.add('b'), r.add('c'), r.add('a'), r.add('c')]).toEqual([true, false, true, true, true, false]);
  });
});
