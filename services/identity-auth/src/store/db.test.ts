import { ApiError } from '@ziti/errors';
import { mapDbError } from './db.js';

/** A unique violation as Prisma's driver adapter reports it (the message quotes the calling source). */
function violation(index: string | undefined, message: string) {
  return {
    code: 'P2002',
    message,
    meta: { modelName: 'Identity', driverAdapterError: { cause: { originalCode: '23505', ...(index ? { constraint: { index } } : {}) } } },
  };
}

describe('mapDbError', () => {
  it('names the field by the violated index, whatever words the message quotes', () => {
    const err = mapDbError(violation('identities_name_key', 'Invalid `this.db.identity.create()` invocation in /work/wt/enroll-token/services/x.ts'), () => 'n1');
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).cause).toEqual({ field: 'name', reason: 'name must be unique', value: 'n1' });
    expect(((mapDbError(violation('identities_external_id_key', 'at /srv/username/token/x.ts')) as ApiError).cause as { field: string }).field).toBe('externalId');
  });

  it('without an index name the error text decides; unknown is (root); other errors pass through', () => {
    expect(((mapDbError(violation(undefined, 'Unique constraint failed on the fields: (`fingerprint`)')) as ApiError).cause as { field: string }).field).toBe('fingerprint');
    expect(((mapDbError(violation('some_other_key', 'x')) as ApiError).cause as { field: string }).field).toBe('(root)');
    const other = new Error('boom');
    expect(mapDbError(other)).toBe(other);
  });
});
