import { dataEnvelope } from '@ziti/errors';
import type { Handler } from '@ziti/http-kit';
import { estCaCertsBody } from '../crypto/pkcs7.js';
import type { Jwts } from '../domain/jwts.js';
import type { ControllerPki } from '../domain/pki.js';

/** `/.well-known/est/cacerts`, `/network-jwts`, `/enroll/jwks`, `/enroll/challenge`. */
export function trustHandlers(pki: ControllerPki, jwts: Jwts): Record<string, Handler> {
  const cacerts = estCaCertsBody(pki.caCertsDer());
  return {
    listWellKnownCas: () => ({ raw: Buffer.from(cacerts), contentType: 'application/pkcs7-mime', headers: { 'Content-Transfer-Encoding': 'base64' } }),
    async listNetworkJWTs() {
      return { body: dataEnvelope([{ name: 'default', token: await jwts.networkJwt() }]) };
    },
    async getEnrollmentJwks() {
      return { body: await jwts.jwks() };
    },
    async enrollmentChallenge(ctx) {
      const { keyId, nonce } = ctx.body as { keyId: string; nonce: string };
      return { body: await jwts.challenge(keyId, nonce) };
    },
  };
}
