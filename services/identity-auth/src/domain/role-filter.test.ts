import { ApiError } from '@ziti/errors';
import { parseRoleFilter } from './role-filter.js';

describe('roleFilter / roleSemantic', () => {
  it('is absent without roleFilter values', () => {
    expect(parseRoleFilter([], 'AnyOf')).toBeUndefined();
  });

  it('splits #attributes, @ids and #all, AllOf by default', () => {
    expect(parseRoleFilter(['#a', '@id1', '#b', '#all'], undefined)).toEqual({ attributes: ['a', 'b'], ids: ['id1'], all: true, semantic: 'AllOf' });
    expect(parseRoleFilter(['#a'], 'AnyOf')?.semantic).toBe('AnyOf');
    expect(parseRoleFilter(['#a'], '')?.semantic).toBe('AllOf');
  });

  it('rejects entries without a prefix and unknown semantics as field errors', () => {
    for (const [values, semantic, field] of [[['plain'], undefined, 'roleFilter'], [['#'], undefined, 'roleFilter'], [['#a'], 'SomeOf', 'roleSemantic']] as const) {
      try {
        parseRoleFilter(values, semantic);
        throw new Error('expected a field error');
      } catch (err) {
        expect(err).toBeInstanceOf(ApiError);
        expect((err as ApiError).cause?.field).toBe(field);
        expect((err as ApiError).code).toBe('COULD_NOT_VALIDATE');
      }
    }
  });
});
