import { ApiError } from '@ziti/errors';
import { parseRoleFilter, parseSemantic, rolesDisplay, selector, selects, validateAttributes, validateRoles } from './roles.js';

const fieldOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return { code: (err as ApiError).code, field: (err as ApiError).cause?.field, reason: (err as ApiError).cause?.reason };
  }
  return undefined;
};

describe('policy role lists (§5.1)', () => {
  it('accepts #attr, @id and a lone #all, dropping duplicates in order', () => {
    expect(validateRoles('identityRoles', ['#a', '@x', '#a'])).toEqual(['#a', '@x']);
    expect(validateRoles('serviceRoles', ['#all'])).toEqual(['#all']);
    expect(validateRoles('serviceRoles', null)).toEqual([]);
  });

  it('refuses unprefixed entries and #all with others', () => {
    expect(fieldOf(() => validateRoles('identityRoles', ['plain']))).toEqual({
      code: 'COULD_NOT_VALIDATE',
      field: 'identityRoles',
      reason: 'role entries must prefixed with # (to indicate role attributes) or @ (to indicate a name or id)',
    });
    expect(fieldOf(() => validateRoles('serviceRoles', ['#all', '#b']))).toMatchObject({ field: 'serviceRoles', reason: 'if using #all, it should be the only role specified' });
    expect(fieldOf(() => validateRoles('serviceRoles', ['#']))).toMatchObject({ field: 'serviceRoles' });
  });

  it('refuses entity attributes that start with # or @', () => {
    expect(validateAttributes(['a', 'b', 'a'])).toEqual(['a', 'b']);
    expect(fieldOf(() => validateAttributes(['#a']))).toMatchObject({ field: 'roleAttributes', reason: 'role attributes may not be prefixed with #' });
    expect(fieldOf(() => validateAttributes(['@a']))).toMatchObject({ field: 'roleAttributes' });
  });

  it('selects by id, #all, AllOf (every attribute) and AnyOf (any attribute)', () => {
    expect(selects(selector(['@e1'], 'AllOf'), 'e1', [])).toBe(true);
    expect(selects(selector(['#all'], 'AllOf'), 'e2', [])).toBe(true);
    expect(selects(selector(['#a', '#b'], 'AllOf'), 'e', ['a'])).toBe(false);
    expect(selects(selector(['#a', '#b'], 'AllOf'), 'e', ['b', 'a', 'c'])).toBe(true);
    expect(selects(selector(['#a', '#b'], 'AnyOf'), 'e', ['b'])).toBe(true);
    expect(selects(selector([], 'AnyOf'), 'e', ['a'])).toBe(false);
    expect(selects(selector(['@x', '#a'], 'AllOf'), 'e', ['a'])).toBe(true);
  });

  it('parses the semantic and roleFilter with the controller wording', () => {
    expect(parseSemantic(undefined)).toBe('AllOf');
    expect(parseSemantic('AnyOf')).toBe('AnyOf');
    expect(fieldOf(() => parseSemantic('OneOf'))).toMatchObject({ field: 'semantic' });
    expect(parseRoleFilter([], undefined)).toBeUndefined();
    expect(parseRoleFilter(['#a', '@b'], 'AnyOf')).toEqual({ ids: ['b'], attrs: ['a'], all: false, semantic: 'AnyOf' });
    expect(fieldOf(() => parseRoleFilter(['#a'], 'Some'))).toMatchObject({ field: 'roleSemantic' });
    expect(fieldOf(() => parseRoleFilter(['a'], undefined))).toMatchObject({ field: 'roleFilter' });
  });

  it('displays @id as @name and #attr as itself', () => {
    expect(rolesDisplay(['#a', '@x', '@gone'], new Map([['x', 'Xavier']]))).toEqual([
      { role: '#a', name: '#a' },
      { role: '@x', name: '@Xavier' },
      { role: '@gone', name: '@gone' },
    ]);
  });
});
