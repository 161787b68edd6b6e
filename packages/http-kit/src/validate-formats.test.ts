import { Type } from '@sinclair/typebox';
import { validateBody } from './validate.js';

describe('body string formats', () => {
  const schema = Type.Object({ at: Type.Optional(Type.String({ format: 'date-time' })), id: Type.Optional(Type.String({ format: 'uuid' })) });

  it('accepts RFC 3339 date-times and UUIDs', () => {
    expect(validateBody(schema, { at: '2030-01-02T03:04:05.678Z', id: '6f1c2b9e-0d1a-4c55-9e1f-0a1b2c3d4e5f' })).toBeTruthy();
    expect(validateBody(schema, { at: '2030-01-02T03:04:05+02:00' })).toBeTruthy();
  });

  it('refuses anything else as a 400 COULD_NOT_VALIDATE on the field', () => {
    expect(() => validateBody(schema, { at: 'tomorrow' })).toThrow(expect.objectContaining({ code: 'COULD_NOT_VALIDATE', cause: expect.objectContaining({ field: 'at' }) }));
    expect(() => validateBody(schema, { id: 'not-a-uuid' })).toThrow(expect.objectContaining({ cause: expect.objectContaining({ field: 'id' }) }));
  });
});
