import { isPrivilegedIdentity, mayTouchIdentity, mayUseEnrollmentSecrets } from './access.js';

const caller = (o: { isAdmin?: boolean; isDefaultAdmin?: boolean; permissions?: string[] } = {}) => ({
  isAdmin: o.isAdmin ?? false,
  isDefaultAdmin: o.isDefaultAdmin ?? false,
  permissions: o.permissions ?? [],
});
const plain = { isAdmin: false, isDefaultAdmin: false, permissions: [] };
const admin = { isAdmin: true, isDefaultAdmin: false, permissions: [] };
const defaultAdmin = { isAdmin: false, isDefaultAdmin: true, permissions: [] };
const holder = { isAdmin: false, permissions: ['service.read'] };

describe('escalation rules', () => {
  it('privileged: an admin, the default admin, a holder of any permission', () => {
    expect([plain, admin, defaultAdmin, holder].map(isPrivilegedIdentity)).toEqual([false, true, true, true]);
  });

  it('only an admin touches a privileged identity; an unknown one is nobody else\'s', () => {
    for (const c of [caller({ isAdmin: true }), caller({ isDefaultAdmin: true })]) {
      expect([admin, defaultAdmin, holder, plain, null].map((t) => mayTouchIdentity(c, t))).toEqual([true, true, true, true, true]);
    }
    const scoped = caller({ permissions: ['enrollment', 'identity'] });
    expect([admin, defaultAdmin, holder, plain, null].map((t) => mayTouchIdentity(scoped, t))).toEqual([false, false, false, true, false]);
    expect(mayTouchIdentity(undefined, plain)).toBe(true);
  });

  it('enrollment secrets: admins always, enrollment/identity holders for ordinary identities, admin_readonly never', () => {
    expect(mayUseEnrollmentSecrets(caller({ isAdmin: true }), admin)).toBe(true);
    expect(mayUseEnrollmentSecrets(caller({ isAdmin: true }), null)).toBe(true);
    for (const p of ['enrollment', 'enrollment.read', 'enrollment.create', 'identity', 'identity.update']) {
      expect([plain, admin, holder, null].map((t) => mayUseEnrollmentSecrets(caller({ permissions: [p] }), t))).toEqual([true, false, false, false]);
    }
    for (const p of [[], ['admin_readonly'], ['service'], ['enrollments'], ['identity.readx']]) {
      expect(mayUseEnrollmentSecrets(caller({ permissions: p }), plain)).toBe(false);
    }
    expect(mayUseEnrollmentSecrets(undefined, plain)).toBe(false);
  });
});
