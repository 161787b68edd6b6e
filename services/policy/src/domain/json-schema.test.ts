import Ajv from 'ajv';
import { ApiError } from '@ziti/errors';
import { BUILTIN_CONFIG_TYPES } from './builtin-config-types.js';
import { compileSchema, validateData } from './json-schema.js';

const causeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as ApiError).cause;
  }
  return undefined;
};

const schema = (id: string) => BUILTIN_CONFIG_TYPES.find((t) => t.id === id)!.schema;

describe('config schemas', () => {
  it('compiles every built-in config type schema as a draft-07 schema', () => {
    expect(BUILTIN_CONFIG_TYPES.map((t) => t.id)).toEqual([
      'f2dd2df0-9c04-4b84-a91e-71437ac229f1', 'cea49285-6c07-42cf-9f52-09a9b115c783', 'g7cIWbcGg', 'NH5p4FpGR', 'host.v2', 'interfaces.v1', 'proxy.v1', 'router.link.v1',
    ]);
    for (const t of BUILTIN_CONFIG_TYPES) expect(() => compileSchema(t.schema)).not.toThrow();
    expect(new Ajv({ strict: false }).validateSchema(schema('host.v2'))).toBe(true);
  });

  it('refuses a schema that is no schema, on the field `schema`', () => {
    expect(causeOf(() => compileSchema({ type: 12 }))).toMatchObject({ field: 'schema' });
  });

  it('reports a failing document at (root) and a failing property by its path', () => {
    const intercept = compileSchema(schema('g7cIWbcGg'));
    expect(causeOf(() => validateData(intercept, { protocols: ['tcp'], addresses: ['a'] }))).toMatchObject({
      field: '(root)',
      reason: '(root) is invalid: portRanges is required',
    });
    expect(causeOf(() => validateData(intercept, { protocols: ['icmp'], addresses: ['a'], portRanges: [{ low: 1, high: 2 }] }))).toMatchObject({ field: 'protocols.0', value: 'icmp' });
    expect(() => validateData(intercept, { protocols: ['tcp', 'udp'], addresses: ['*.ziti', '10.0.0.0/8'], portRanges: [{ low: 1, high: 65535 }] })).not.toThrow();
  });

  it('enforces host.v1 forwardProtocol ⇒ allowedProtocols, else protocol', () => {
    const host = compileSchema(schema('NH5p4FpGR'));
    expect(() => validateData(host, { protocol: 'tcp', address: 'localhost', port: 80 })).not.toThrow();
    expect(causeOf(() => validateData(host, { forwardProtocol: true, address: 'localhost', port: 80 }))).toMatchObject({ field: '(root)' });
    expect(() => validateData(host, { forwardProtocol: true, allowedProtocols: ['tcp'], address: 'localhost', port: 80 })).not.toThrow();
  });
});
