import type { IncomingMessage } from 'node:http';
import { keepRepeatedHeaders } from './proxy.js';

const response = (rawHeaders: string[], headers: Record<string, string>) => ({ rawHeaders, headers }) as unknown as IncomingMessage;

describe('keepRepeatedHeaders', () => {
  it('gives a header the service sent twice back as two values, and leaves single ones alone', () => {
    const res = response(
      ['Content-Type', 'application/json', 'ziti-authenticator-extend-requested', 'true', 'ziti-authenticator-extend-requested', 'true'],
      { 'content-type': 'application/json', 'ziti-authenticator-extend-requested': 'true, true' },
    );
    keepRepeatedHeaders(res);
    expect(res.headers).toEqual({ 'content-type': 'application/json', 'ziti-authenticator-extend-requested': ['true', 'true'] });
  });

  it('never brings back an internal header that was removed', () => {
    const res = response(['x-ziti-principal', 'a', 'x-ziti-principal', 'b'], {});
    keepRepeatedHeaders(res);
    expect(res.headers).toEqual({});
  });
});
