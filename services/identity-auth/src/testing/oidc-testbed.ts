import { internalFetch, internalTestClient } from '@ziti/service-kit';
import { X509Certificate, createHash, randomBytes } from 'node:crypto';
import { type ServiceError } from '@grpc/grpc-js';
import { fromGrpcError } from '@ziti/errors';
import { CLIENT_CERT_HEADER, type RequestPrincipal, signClientCertChain } from '@ziti/http-kit';
import { IdentityAuthServiceClient } from '@ziti/proto';
import { type TestCert, selfSignedCert, signJwt } from './certs.js';
import { type FakePki, startFakePki } from './fake-pki.js';
import { C, Harness, M, SECRET } from './harness.js';
import { totpCodes, wrongTotpCodes } from './totp-codes.js';
import { decodeJwt } from '../oidc/jwt.js';

export const HOST = 'ctrl.example.com:1280';
export const ISSUER = `https://${HOST}/oidc`;
/** The C SDK's redirect URI (`default_cb_url` of library/oidc.c). */
export const CB = 'http://localhost:20314/auth/callback';
export const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const now = () => Math.floor(Date.now() / 1000);

export interface Raw {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}


export type Auth = { verifier: string; challenge: string; state: string };

/**
 * identity-auth's `/oidc` provider with a fake pki-enrollment, started once for the calling test
 * file (its beforeAll/afterAll), and the requests an SDK makes, driven as the gateway passes them.
 */
export function oidcTestbed() {
  let h!: Harness;
  let pki!: FakePki;
  let admin!: RequestPrincipal;
  let grpc: IdentityAuthServiceClient | undefined;

  beforeAll(async () => {
    pki = await startFakePki();
    h = await Harness.start({ pkiEnrollmentGrpc: pki.address });
    admin = (await h.login()).principal;
    grpc = internalTestClient(IdentityAuthServiceClient, h.service.grpcAddress, 'identity-auth');
  });
  afterAll(async () => {
    grpc?.close();
    await h?.close();
    await pki?.stop();
  });

  /** A request to `/oidc…` without following redirects, with the forwarded public host. */
  async function oidc(method: string, path: string, opts: { headers?: Record<string, string>; body?: string; json?: unknown; form?: string } = {}): Promise<Raw> {
    const headers: Record<string, string> = { 'x-forwarded-host': HOST, 'x-forwarded-proto': 'https', ...opts.headers };
    let body = opts.body;
    if (opts.json !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(opts.json);
    }
    if (opts.form !== undefined) {
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
      body = opts.form;
    }
    const res = await internalFetch(h.service.httpUrl + path, { method, headers, body, redirect: 'manual' });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, text, body: parsed };
  }

  const certHeader = (cert: TestCert) => ({ [CLIENT_CERT_HEADER]: signClientCertChain(SECRET, [new X509Certificate(cert.certPem).raw], 'r1') });

  /** The PKCE pair and state of one login, as oidc.c makes them. */
  function newAuth() {
    const verifier = randomBytes(32).toString('base64url');
    return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url'), state: randomBytes(30).toString('base64url') };
  }

  /** `POST /oidc/authorize` with every parameter in the query and `Accept: application/json` (oidc_client_start). */
  async function authorize(auth: Auth, headers: Record<string, string> = {}, extra = ''): Promise<{ res: Raw; id: string; path: string }> {
    const q = new URLSearchParams({
      client_id: 'openziti', scope: 'openid offline_access', response_type: 'code', redirect_uri: CB,
      code_challenge: auth.challenge, code_challenge_method: 'S256', state: auth.state, audience: 'openziti',
    });
    const res = await oidc('POST', `/oidc/authorize?${q}${extra}`, { headers: { accept: 'application/json', ...headers } });
    const location = res.headers.get('location') ?? '';
    // auth_cb: the id is what follows `authRequestID=` up to the next `&`.
    const p = location.indexOf('authRequestID=');
    const tail = p < 0 ? '' : location.slice(p + 'authRequestID='.length);
    return { res, id: tail.split('&')[0]!, path: location };
  }

  /** code_cb: GET the callback path, then the code is everything after `code=` in the redirect. */
  async function codeTail(callbackLocation: string): Promise<{ res: Raw; tail: string }> {
    const u = new URL(callbackLocation);
    expect(u.origin).toBe(`https://${HOST}`);
    const res = await oidc('GET', u.pathname + u.search);
    expect(res.status).toBe(302);
    const location = res.headers.get('location')!;
    const i = location.indexOf('code=');
    return { res, tail: location.slice(i + 'code='.length) };
  }

  /** request_token: the form exactly as oidc.c sends it, the code tail (`<code>&state=...`) unescaped. */
  const tokenForm = (auth: Auth, tail: string, over: { verifier?: string; redirect?: string; clientId?: string } = {}) =>
    `state=${auth.state}&code=${tail}&grant_type=authorization_code&code_verifier=${over.verifier ?? auth.verifier}` +
    `&client_id=${over.clientId ?? 'openziti'}&redirect_uri=${encodeURIComponent(over.redirect ?? CB)}`;

  const token = (form: string, headers: Record<string, string> = {}) => oidc('POST', '/oidc/oauth/token', { form, headers });
  const claims = (jwt: string) => decodeJwt(jwt)!.claims as Record<string, any>;
  const refreshForm = (refresh: string) => `client_id=openziti&grant_type=refresh_token&refresh_token=${refresh}`;
  const basic = { authorization: `Basic ${Buffer.from('openziti:').toString('base64')}` };

  /** A full password login through the endpoints; the token answer. */
  async function passwordLogin(user: { username: string; password: string }): Promise<{ auth: Auth; tokens: any }> {
    const auth = newAuth();
    const { id } = await authorize(auth);
    const login = await oidc('POST', '/oidc/login/password', { form: `id=${id}&username=${encodeURIComponent(user.username)}&password=${encodeURIComponent(user.password)}` });
    expect(login.status).toBe(302);
    const { tail } = await codeTail(login.headers.get('location')!);
    const res = await token(tokenForm(auth, tail));
    expect(res.status).toBe(200);
    return { auth, tokens: res.body };
  }

  const rpc = <T>(method: string, req: object): Promise<T> =>
    new Promise((resolve, reject) =>
      (grpc! as unknown as Record<string, (r: object, cb: (e: ServiceError | null, r: T) => void) => void>)[method]!.call(grpc, req, (err, res) =>
        err ? reject(fromGrpcError(err)) : resolve(res),
      ),
    );

  async function certIdentity(): Promise<{ id: string; cert: TestCert; authenticatorId: string }> {
    const created = await h.call('POST', `${M}/identities`, { principal: admin, body: { name: `dev-${randomBytes(4).toString('hex')}`, type: 'Device', isAdmin: false } });
    const id = created.body.data.id as string;
    const cert = selfSignedCert('oidc-device');
    const a = await rpc<{ id: string }>('createCertAuthenticator', { identityId: id, certPem: cert.certPem, fingerprint: '', isIssuedByNetwork: true, caId: '' });
    pki.verdicts.set(cert.fingerprint, { verified: true, leafPem: cert.certPem });
    return { id, cert, authenticatorId: a.id };
  }

  return {
    get h() { return h; },
    get pki() { return pki; },
    get admin() { return admin; },
    oidc, certHeader, newAuth, authorize, codeTail, tokenForm, token, claims, refreshForm, basic, passwordLogin, rpc, certIdentity,
  };
}

