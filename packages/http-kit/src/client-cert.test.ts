import type { IncomingMessage } from 'node:http';
import { CLIENT_CERT_HEADER, clientCertChainOf, signClientCertChain, verifyClientCertChain } from './client-cert.js';
import { REQUEST_ID_HEADER, signPrincipal } from './principal.js';

const chain = [Buffer.from('leaf-der'), Buffer.from('intermediate-der')];

describe('client certificate tokens', () => {
  it('round-trips the chain, leaf first, for the request it was signed for', () => {
    const token = signClientCertChain('s3cret', chain, 'rid-1');
    expect(verifyClientCertChain('s3cret', token, 'rid-1')).toEqual(chain);
    expect(verifyClientCertChain('s3cret', token)).toEqual(chain);
  });

  it('refuses another secret, a tampered payload, another request id and a stale token', () => {
    const token = signClientCertChain('s3cret', chain, 'rid-1');
    expect(() => verifyClientCertChain('other', token)).toThrow(expect.objectContaining({ code: 'UNAUTHORIZED' }));
    const [payload, sig] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ c: [Buffer.from('evil').toString('base64')], rid: 'rid-1', exp: 9e9 })).toString('base64url');
    expect(() => verifyClientCertChain('s3cret', `${forged}.${sig}`)).toThrow(expect.objectContaining({ status: 401 }));
    expect(() => verifyClientCertChain('s3cret', `${payload}.`)).toThrow(expect.objectContaining({ status: 401 }));
    expect(() => verifyClientCertChain('s3cret', token, 'rid-2')).toThrow(expect.objectContaining({ status: 401 }));
    expect(() => verifyClientCertChain('s3cret', signClientCertChain('s3cret', chain, 'rid-1', -5))).toThrow(expect.objectContaining({ status: 401 }));
  });

  it('never accepts a principal token (same secret) as a certificate token', () => {
    const principalToken = signPrincipal('s3cret', { identityId: 'x' } as never, 'rid-1');
    expect(() => verifyClientCertChain('s3cret', principalToken)).toThrow(expect.objectContaining({ status: 401 }));
  });

  it('reads the chain from a request: none without the header, the chain with a valid one', () => {
    const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
    expect(clientCertChainOf(req({}), 's3cret')).toEqual([]);
    const token = signClientCertChain('s3cret', chain, 'rid-9');
    expect(clientCertChainOf(req({ [CLIENT_CERT_HEADER]: token, [REQUEST_ID_HEADER]: 'rid-9' }), 's3cret')).toEqual(chain);
    expect(() => clientCertChainOf(req({ [CLIENT_CERT_HEADER]: token, [REQUEST_ID_HEADER]: 'rid-8' }), 's3cret')).toThrow();
  });
});
