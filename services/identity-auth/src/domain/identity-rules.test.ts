import { ApiError } from '@ziti/errors';
import { assertMayWrite, fullFields, identityTypeId, patchedFields, validatePermissions, validateRoleAttributes } from './identity-rules.js';
import type { Identity } from './model.js';

function fieldError(fn: () => unknown): { field?: string; reason?: string; value?: unknown } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('COULD_NOT_VALIDATE');
    return (err as ApiError).cause ?? {};
  }
  throw new Error('expected a field error');
}

const base = { name: 'n1', type: 'User', isAdmin: false };

describe('identity rules', () => {
  it('maps the API types onto the stored identity types', () => {
    expect(['User', 'Device', 'Service', 'Default'].map(identityTypeId)).toEqual(['Default', 'Default', 'Default', 'Default']);
    expect(identityTypeId('Router')).toBe('Router');
    expect(fieldError(() => identityTypeId('Robot'))).toEqual({
      field: 'type',
      reason: 'type in body should be one of [User Device Service Router Default]',
      value: 'Robot',
    });
  });

  it('refuses role attributes that look like selectors', () => {
    expect(validateRoleAttributes(['a', 'b#', 'c@'])).toEqual(['a', 'b#', 'c@']);
    expect(fieldError(() => validateRoleAttributes(['ok', '#x']))).toEqual({ field: 'roleAttributes', reason: 'role attributes may not be prefixed with #', value: '#x' });
    expect(fieldError(() => validateRoleAttributes(['@x'])).reason).toBe('role attributes may not be prefixed with @');
  });

  it('accepts the controller permission names only', () => {
    expect(validatePermissions(['admin_readonly', 'identity.read', 'ops', 'service-edge-router-policy.delete'])).toHaveLength(4);
    expect(validatePermissions(['ca', 'ca'])).toEqual(['ca']);
    expect(fieldError(() => validatePermissions(['ca', 'admin'])).field).toBe('permissions');
    expect(fieldError(() => validatePermissions(['controllers'])).field).toBe('permissions');
  });

  it('defaults every omitted field (create and PUT)', () => {
    expect(fullFields(base)).toEqual({
      name: 'n1',
      typeId: 'Default',
      isAdmin: false,
      roleAttributes: [],
      tags: {},
      appData: {},
      authPolicyId: 'default',
      externalId: null,
      defaultHostingPrecedence: 'default',
      defaultHostingCost: 0,
      serviceHostingPrecedences: {},
      serviceHostingCosts: {},
      permissions: [],
    });
    expect(fullFields({ ...base, externalId: '', authPolicyId: null, tags: null }).externalId).toBeNull();
  });

  it('validates names, hosting precedences and costs', () => {
    expect(fieldError(() => fullFields({ ...base, name: '' })).field).toBe('name');
    expect(fieldError(() => fullFields({ ...base, type: undefined })).field).toBe('type');
    expect(fieldError(() => fullFields({ ...base, defaultHostingPrecedence: 'maybe' })).field).toBe('defaultHostingPrecedence');
    expect(fieldError(() => fullFields({ ...base, defaultHostingCost: 70000 })).field).toBe('defaultHostingCost');
    expect(fieldError(() => fullFields({ ...base, serviceHostingPrecedences: { s: 'x' } })).field).toBe('serviceHostingPrecedences');
    expect(fieldError(() => fullFields({ ...base, serviceHostingCosts: { s: -1 } })).field).toBe('serviceHostingCosts');
  });

  it('stores names NFC-normalised without surrounding white space, and refuses blank ones (create, PUT, PATCH)', () => {
    expect(fullFields({ ...base, name: ' cafe\u0301\t' }).name).toBe('caf\u00e9');
    expect(fieldError(() => fullFields({ ...base, name: '   ' })).field).toBe('name');
    const current = fullFields(base);
    expect(patchedFields(current, { name: 'caf\u00e9 ' }).name).toBe('caf\u00e9');
    expect(fieldError(() => patchedFields(current, { name: '\u00a0' })).field).toBe('name');
  });

  it('PATCH keeps what the body does not name', () => {
    const current = { ...fullFields({ ...base, roleAttributes: ['a'], tags: { t: 1 }, externalId: 'e' }) };
    expect(patchedFields(current, { appData: { k: 1 } })).toEqual({ ...current, appData: { k: 1 } });
    expect(patchedFields(current, { roleAttributes: null, externalId: null })).toEqual({ ...current, roleAttributes: [], externalId: null });
    expect(patchedFields(current, { type: 'Router', isAdmin: true }).typeId).toBe('Router');
    expect(fieldError(() => patchedFields(current, { name: null })).field).toBe('name');
  });

  it('lets only admins create or edit admins, or grant permissions', () => {
    const plain = fullFields(base);
    const identity = (over: Partial<Identity>): Identity => ({ ...plain, id: 'i', isDefaultAdmin: false, isSystem: false, sdkInfo: {}, envInfo: {}, disabled: false, disabledAt: null, disabledUntil: null, trace: null, createdAt: new Date(), updatedAt: new Date(), ...over });
    const unauthorized = (fn: () => void) => expect(fn).toThrow(expect.objectContaining({ code: 'UNAUTHORIZED' }));
    assertMayWrite({ isAdmin: true }, { ...plain, isAdmin: true, permissions: ['ops'] }, identity({ isDefaultAdmin: true }));
    assertMayWrite({ isAdmin: false }, plain, identity({}));
    unauthorized(() => assertMayWrite({ isAdmin: false }, { ...plain, isAdmin: true }, null));
    unauthorized(() => assertMayWrite({ isAdmin: false }, { ...plain, permissions: ['ca'] }, null));
    unauthorized(() => assertMayWrite({ isAdmin: false }, plain, identity({ isAdmin: true })));
    unauthorized(() => assertMayWrite({ isAdmin: false }, null, identity({ isDefaultAdmin: true })));
  });
});
