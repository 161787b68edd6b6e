import { ApiError } from '@ziti/errors';
import { requireName } from './names.js';

const refusal = (v: unknown) => {
  try {
    requireName(v);
    return undefined;
  } catch (e) {
    return [(e as ApiError).code, (e as ApiError).cause?.field, (e as ApiError).cause?.reason];
  }
};

describe('names of config types, configs, services, routers and policies', () => {
  it('are stored NFC-normalised, without surrounding white space', () => {
    expect(requireName('cafe\u0301')).toBe('caf\u00e9');
    expect(requireName(' caf\u00e9\t')).toBe('caf\u00e9');
    expect(requireName('a b')).toBe('a b');
  });

  it('refuse a missing, empty or blank name as before', () => {
    for (const v of [undefined, null, 7, '', '   ', '\u00a0\u3000']) expect(refusal(v)).toEqual(['COULD_NOT_VALIDATE', 'name', 'name is required']);
  });
});
