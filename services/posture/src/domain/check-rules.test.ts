import { ApiError } from '@ziti/errors';
import { fieldsFor, patchFields } from './check-rules.js';

const fieldOf = (fn: () => unknown) => {
  try {
    fn();
    return undefined;
  } catch (e) {
    return [(e as ApiError).code, (e as ApiError).cause?.field];
  }
};

describe('posture check names', () => {
  const body = { typeId: 'DOMAIN', name: ' cafe\u0301 ', domains: ['example.com'] };

  it('are stored NFC-normalised without surrounding white space, on create, PUT and PATCH', () => {
    const created = fieldsFor('Create', { ...body });
    expect(created.name).toBe('caf\u00e9');
    expect(fieldsFor('Update', { ...body, name: 'x\u00a0' }).name).toBe('x');
    const existing = { id: 'c1', ...created, createdAt: new Date(), updatedAt: new Date() } as unknown as Parameters<typeof patchFields>[1];
    expect(patchFields({ typeId: 'DOMAIN', name: '\tcafe\u0301' }, existing).name).toBe('caf\u00e9');
    expect(patchFields({ typeId: 'DOMAIN' }, existing).name).toBe('caf\u00e9');
  });

  it('refuse a blank name as an empty one', () => {
    expect(fieldOf(() => fieldsFor('Create', { ...body, name: '' }))).toEqual(['COULD_NOT_VALIDATE', 'name']);
    expect(fieldOf(() => fieldsFor('Create', { ...body, name: '   ' }))).toEqual(['COULD_NOT_VALIDATE', 'name']);
  });
});
