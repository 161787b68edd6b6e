import { createHash, randomBytes } from 'node:crypto';
import { type BaseClient, Issuer, custom, generators } from 'openid-client';
import type { HttpClient, HttpResponse } from './http.js';

/** The C SDK's client (`library/oidc.c`): id, scopes, and its fixed callback. */
export const C_SDK = { clientId: 'openziti', scope: 'openid offline_access', redirectUri: 'http://localhost:20314/auth/callback' } as const;

/** A PKCE verifier, its S256 challenge and a state, as `new_auth_req` of oidc.c makes them. */
export function pkce(): { verifier: string; challenge: string; state: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url'), state: randomBytes(16).toString('base64url') };
}

/** The query of a `Location` (absolute or relative). */
export function locationQuery(res: HttpResponse): URLSearchParams {
  const loc = res.headers.location;
  if (typeof loc !== 'string') throw new Error(`no Location on ${res.status} ${res.text.slice(0, 300)}`);
  return new URL(loc, 'https://placeholder').searchParams;
}

/** The path and query of a `Location`, as the C SDK requests it next (`uri.path` runs to the end). */
export function locationPath(res: HttpResponse): string {
  const loc = res.headers.location;
  if (typeof loc !== 'string') throw new Error(`no Location on ${res.status} ${res.text.slice(0, 300)}`);
  const u = new URL(loc, 'https://placeholder');
  return u.pathname + u.search;
}

export interface CSdkLogin {
  /** `/oidc/login/cert` with this client certificate, else `/oidc/login/ext-jwt` with `bearer`. */
  clientCert?: { certPem: string; keyPem: string };
  bearer?: string[];
  /** Called when the login answers that TOTP is required: the code to send to `/oidc/login/totp`. */
  totp?: () => string;
  /** Extra query parameters of the authorize request (e.g. `configTypes`). */
  extraQuery?: Record<string, string>;
}

export interface CSdkResult {
  authorize: HttpResponse;
  login: HttpResponse;
  totp?: HttpResponse;
  callback: HttpResponse;
  token: HttpResponse;
  /** The tokens of the token answer (when it was 200). */
  accessToken: string;
  refreshToken: string;
  idToken: string;
}

/**
 * The request sequence of OpenZiti's C SDK (`library/oidc.c`), byte for byte where it matters:
 * a POST to the authorization endpoint with every parameter in the query and
 * `Accept: application/json`; the `authRequestID` read from `Location`; the login POSTed with
 * `?id=` and a JSON body of sdkInfo/envInfo; TOTP as a form; the `Location` path requested as is;
 * and the token request as a form in which the code is the unescaped tail of the callback's query
 * (`<code>&state=<state>`, as `strstr(uri.query, "code=")` leaves it).
 */
export async function cSdkLogin(http: HttpClient, o: CSdkLogin): Promise<CSdkResult> {
  const p = pkce();
  const q = new URLSearchParams({
    client_id: C_SDK.clientId,
    scope: C_SDK.scope,
    response_type: 'code',
    redirect_uri: C_SDK.redirectUri,
    code_challenge: p.challenge,
    code_challenge_method: 'S256',
    state: p.state,
    audience: 'openziti',
    ...o.extraQuery,
  });
  const authorize = await http.request({ method: 'POST', path: `/oidc/authorize?${q}`, headers: { accept: 'application/json' }, validate: false, clientCert: o.clientCert });
  if (authorize.status !== 302) throw new Error(`authorize: ${authorize.status} ${authorize.text.slice(0, 300)}`);
  const id = /authRequestID=([^&]+)/.exec(String(authorize.headers.location))?.[1];
  if (!id) throw new Error(`authorize: no authRequestID in ${authorize.headers.location}`);
  const path = o.clientCert ? '/oidc/login/cert' : '/oidc/login/ext-jwt';
  const body = {
    sdkInfo: { type: 'ziti-sdk-c', version: '1.18.7', revision: 'abc980ea', branch: 'HEAD', appId: 'blackbox', appVersion: '1' },
    envInfo: { arch: 'x86_64', os: 'linux', osRelease: '6.1', osVersion: '1', domain: '', hostname: 'bbt' },
  };
  const authHeaders = Object.fromEntries((o.bearer ?? []).map((t, i) => [i === 0 ? 'authorization' : `x-unused-${i}`, `Bearer ${t}`]));
  const login = await http.request({
    method: 'POST',
    path: `${path}?id=${id}`,
    headers: { accept: 'application/json', 'content-type': 'application/json', ...authHeaders },
    raw: JSON.stringify(body),
    validate: false,
    clientCert: o.clientCert,
  });
  let next = login;
  let totp: HttpResponse | undefined;
  if (login.status === 200 && String(login.headers['totp-required']).toLowerCase().startsWith('t')) {
    if (!o.totp) throw new Error('login: TOTP required');
    totp = await http.request({
      method: 'POST',
      path: '/oidc/login/totp',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      raw: `id=${id}&code=${o.totp()}`,
      validate: false,
      clientCert: o.clientCert,
    });
    next = totp;
  }
  if (next.status !== 302) throw new Error(`login: ${next.status} ${next.text.slice(0, 300)}`);
  const callback = await http.request({ method: 'GET', path: locationPath(next), validate: false, clientCert: o.clientCert });
  if (callback.status !== 302) throw new Error(`callback: ${callback.status} ${callback.text.slice(0, 300)}`);
  const redirect = String(callback.headers.location);
  if (!redirect.startsWith(`${C_SDK.redirectUri}?`)) throw new Error(`callback: redirected to ${redirect}`);
  const code = redirect.slice(redirect.indexOf('code=') + 'code='.length);
  // tlsuv_http_req_form: name=value pairs joined with '&', values not escaped.
  const form = [`state=${p.state}`, `code=${code}`, 'grant_type=authorization_code', `code_verifier=${p.verifier}`, `client_id=${C_SDK.clientId}`, `redirect_uri=${C_SDK.redirectUri}`].join('&');
  const token = await http.request({
    method: 'POST',
    path: '/oidc/oauth/token',
    headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
    raw: form,
    validate: false,
    clientCert: o.clientCert,
  });
  return {
    authorize,
    login,
    ...(totp ? { totp } : {}),
    callback,
    token,
    accessToken: token.body?.access_token,
    refreshToken: token.body?.refresh_token,
    idToken: token.body?.id_token,
  };
}

/** The claims of a JWT, decoded without verification. */
export function claimsOf(jwt: string): Record<string, any> {
  return JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8'));
}

/** The header of a JWT. */
export function headerOf(jwt: string): Record<string, any> {
  return JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString('utf8'));
}

/** Both Edge APIs with `Authorization: Bearer <access token>` and no `zt-session`. */
export function bearerApi(http: HttpClient, accessToken: string) {
  const call = (api: 'client' | 'management', method: string, path: string, json?: unknown) =>
    http.request({ method, path: `/edge/${api}/v1${path}`, json, headers: { authorization: `Bearer ${accessToken}` } });
  return {
    client: (method: string, path: string, json?: unknown) => call('client', method, path, json),
    management: (method: string, path: string, json?: unknown) => call('management', method, path, json),
  };
}

/** A refresh through the token endpoint as the C SDK does it (Basic `openziti:` and a form). */
export function refreshAsCSdk(http: HttpClient, refreshToken: string, clientCert?: { certPem: string; keyPem: string }): Promise<HttpResponse> {
  return http.request({
    method: 'POST',
    path: '/oidc/oauth/token',
    headers: {
      accept: 'application/json',
      authorization: `Basic ${Buffer.from(`${C_SDK.clientId}:`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    raw: `client_id=${C_SDK.clientId}&grant_type=refresh_token&refresh_token=${refreshToken}`,
    validate: false,
    clientCert,
  });
}

/**
 * openid-client (a standard relying party) discovering this controller's provider at
 * `<url>/oidc` and trusting its CA; `native` is sdk-golang's (and the `ziti` CLI's) client id.
 */
export async function relyingParty(url: string, caCertPem: string, clientId: 'openziti' | 'native' = 'openziti'): Promise<{ issuer: Issuer<BaseClient>; client: BaseClient; redirectUri: string }> {
  custom.setHttpOptionsDefaults({ ca: caCertPem, timeout: 10_000 });
  const issuer = await Issuer.discover(`${url}/oidc`);
  const redirectUri = clientId === 'native' ? 'http://localhost:8080/auth/callback' : C_SDK.redirectUri;
  const client = new issuer.Client({ client_id: clientId, token_endpoint_auth_method: 'none', redirect_uris: [redirectUri], response_types: ['code'], id_token_signed_response_alg: 'ES256' });
  return { issuer, client, redirectUri };
}

/** A fresh PKCE verifier, state and nonce of openid-client's generators. */
export function rpRequest(): { verifier: string; challenge: string; state: string; nonce: string } {
  const verifier = generators.codeVerifier();
  return { verifier, challenge: generators.codeChallenge(verifier), state: generators.state(), nonce: generators.nonce() };
}
