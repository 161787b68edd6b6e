import { type KeyObject, X509Certificate, createHash, createHmac, createPrivateKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import forge from 'node-forge';
import { auth, type EdgeApi, uniqueName } from './clients.js';
import type { HttpClient, HttpResponse } from './http.js';
import type { ApiName } from './spec-validator.js';

/**
 * Helpers of the identity-auth black-box tests: users with passwords, auth policies, TOTP codes,
 * certificates and JWTs for external signers, a local JWKS server.
 */

export interface User {
  id: string;
  name: string;
  username: string;
  password: string;
}

/** Creates an identity (through `mgmt`) and gives it an updb authenticator; fails loudly otherwise. */
export async function createUser(mgmt: EdgeApi, body: Record<string, unknown> = {}, password = `Pw!${randomBytes(9).toString('base64url')}7a`): Promise<User> {
  const name = uniqueName('ia-user');
  const created = await mgmt.identities.create({ name, type: 'User', isAdmin: false, ...body });
  if (created.status !== 201) throw new Error(`identity create failed: ${created.status} ${created.text}`);
  const id = created.body.data.id as string;
  const authn = await mgmt.call('POST', '/authenticators', { method: 'updb', identityId: id, username: name, password });
  if (authn.status !== 201) throw new Error(`authenticator create failed: ${authn.status} ${authn.text}`);
  return { id, name, username: name, password };
}

/** Logs a user in; the session (EdgeApi) or the failed response. */
export async function loginAs(http: HttpClient, user: { username: string; password: string }, api: ApiName = 'management'): Promise<{ res: HttpResponse; session: EdgeApi }> {
  const { res, session } = await auth.login(http, user.username, user.password, api);
  return { res, session };
}

/** An auth policy body (authPolicyCreate) with permissive defaults, then `over` merged in. */
export function authPolicyBody(name: string, over: { updb?: Record<string, unknown>; extJwt?: Record<string, unknown>; secondary?: Record<string, unknown> } = {}) {
  return {
    name,
    primary: {
      cert: { allowed: true, allowExpiredCerts: true },
      extJwt: { allowed: true, allowedSigners: [], ...over.extJwt },
      updb: {
        allowed: true, minPasswordLength: 5, requireSpecialChar: false, requireNumberChar: false, requireMixedCase: false,
        maxAttempts: 0, lockoutDurationMinutes: 0, ...over.updb,
      },
    },
    secondary: { requireTotp: false, requireExtJwtSigner: null, ...over.secondary },
  };
}

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** The TOTP code (RFC 6238: SHA-1, 6 digits, 30 s) of a base32 secret, as an authenticator app shows it. */
export function totp(secret: string, at = Date.now()): string {
  let bits = 0;
  let value = 0;
  const bytes: number[] = [];
  for (const c of secret.toUpperCase().replace(/=+$/, '')) {
    value = (value << 5) | B32.indexOf(c);
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(Math.floor(at / 30_000)));
  const mac = createHmac('sha1', Buffer.from(bytes)).update(msg).digest();
  const off = mac[mac.length - 1]! & 15;
  return String((mac.readUInt32BE(off) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

/**
 * TOTP codes of one secret, each of another time step (the controller accepts a code once per
 * identity): steps t-1 … t+2 of the step `t` when it was made, all inside the accepted window
 * t-2 … t+2 even when a step boundary passes before the last is used.
 */
export function totpCodes(secret: string): () => string {
  const base = Math.floor(Date.now() / 30_000);
  let next = base - 1;
  return () => {
    if (next > base + 2) throw new Error('totpCodes: only four distinct codes fit the window');
    return totp(secret, next++ * 30_000 + 15_000);
  };
}

export interface TestCert {
  certPem: string;
  privateKey: KeyObject;
  /** Lower-case hex SHA-1 of the DER. */
  fingerprint: string;
}

/** A self-signed RSA certificate valid for a day (JWT signer or client certificate). */
export function selfSignedCert(commonName: string): TestCert {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  cert.serialNumber = `01${randomBytes(8).toString('hex')}`;
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  cert.setSubject([{ name: 'commonName', value: commonName }]);
  cert.setIssuer([{ name: 'commonName', value: commonName }]);
  cert.sign(forge.pki.privateKeyFromPem(keyPem), forge.md.sha256.create());
  const certPem = forge.pki.certificateToPem(cert);
  return { certPem, privateKey: createPrivateKey(keyPem), fingerprint: createHash('sha1').update(new X509Certificate(certPem).raw).digest('hex') };
}

/** A signed JWT (RS256 for RSA keys, ES256 for EC keys). */
export async function signJwt(key: KeyObject, claims: Record<string, unknown>, header: Record<string, unknown> = {}): Promise<string> {
  const jose = await import('jose');
  const alg = key.asymmetricKeyType === 'ec' ? 'ES256' : 'RS256';
  return new jose.SignJWT(claims).setProtectedHeader({ alg, ...header }).sign(key);
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A local JWKS endpoint serving one EC key (`kid`), counting its requests. */
export async function startJwksServer(kid = 'ec-key-1'): Promise<{ url: string; privateKey: KeyObject; kid: string; hits: () => number; close(): Promise<void> }> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid, use: 'sig', alg: 'ES256' };
  let hits = 0;
  const server = http.createServer((_req, res) => {
    hits++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://localhost:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
  return { url, privateKey, kid, hits: () => hits, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** `POST /authenticate?method=ext-jwt` with `Authorization: Bearer <token>` (no header without a token). */
export function extJwtLogin(http: HttpClient, token: string | undefined, api: ApiName = 'client'): Promise<HttpResponse> {
  const base = api === 'client' ? '/edge/client/v1' : '/edge/management/v1';
  return http.request({ method: 'POST', path: `${base}/authenticate?method=ext-jwt`, json: {}, headers: token ? { authorization: `Bearer ${token}` } : {} });
}

/** The session of an API with one more request header (e.g. a secondary `Authorization: Bearer`). */
export function withHeaders(api: EdgeApi, headers: Record<string, string>) {
  return { call: (method: string, path: string, json?: unknown) => api.call(method, path, json, headers) };
}

/**
 * Runs SQL on the test controller's database in the identity-auth schema: only to move a stored
 * instant into the past (a lockout running out) instead of waiting for the clock.
 */
export async function identityAuthSql(databaseUrl: string, text: string, params: unknown[] = []): Promise<unknown[]> {
  const { Client } = await import('pg');
  const c = new Client({ connectionString: databaseUrl, options: '-c search_path=identity_auth' });
  await c.connect();
  try {
    return (await c.query(text, params)).rows;
  } finally {
    await c.end();
  }
}
