import type { ServerResponse } from 'node:http';
import { ApiError } from '@ziti/errors';
import {
  MAX_BODY_BYTES,
  type RawHandler,
  type ServiceRequest,
  assertStorableRequest,
  clientCertChainOf,
  hasBody,
  headerValue,
  isJsonMediaType,
  mediaTypeOf,
  readBody,
  readJsonBody,
  sendBody,
  sendError,
  sendJson,
} from '@ziti/http-kit';
import type { Logger } from '@ziti/log';
import { bearerTokensOf } from '../http/access.js';
import { clientIpOf } from '../http/authenticate.js';
import { mfaDetail } from '../http/auth-views.js';
import { AUTH_REQUEST_SECONDS, isRandomId } from './auth-requests.js';
import { OAuthError } from './oauth.js';
import type { LoginInput, LoginOutcome, OidcProvider } from './provider.js';
import { loginPage, totpPage } from './pages.js';

const JSON_TYPE = 'application/json';
const HTML_TYPE = 'text/html';
const FORM_TYPE = 'application/x-www-form-urlencoded';

/** Request parameters: every value of each name, in order. */
type Params = Record<string, string[]>;

const first = (p: Params, name: string): string | undefined => p[name]?.[0];

/** `host[:port]`: a DNS name, an IPv4 literal or a bracketed IPv6 literal, and an optional port. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?$/;

/** The public host of the request (`x-forwarded-host` from the gateway, else `Host`); 400 when malformed. */
export function publicHost(req: ServiceRequest): string {
  const fwd = req.headers['x-forwarded-host'];
  const raw = (Array.isArray(fwd) ? fwd[0] : fwd)?.split(',')[0]?.trim() || req.headers.host || '';
  if (raw.length > 260 || !HOST.test(raw)) throw ApiError.field('Host', 'the host of the request is malformed');
  return raw;
}

/** Parses `a=1&b=2` (form bodies and queries) into every value of each name. */
export function parseParams(text: string): Params {
  const out: Params = {};
  for (const [k, v] of new URLSearchParams(text)) (out[k] ??= []).push(v);
  assertStorableRequest({ query: out });
  return out;
}

/** The response type a login endpoint answers with (negotiate.go): JSON unless HTML is preferred; 406 when neither is acceptable. */
export function negotiate(accept: string | undefined): 'json' | 'html' {
  if (!accept || !accept.trim()) return 'json';
  const entries = accept
    .split(',')
    .map((entry, i) => {
      const [type = '', ...params] = entry.split(';').map((s) => s.trim());
      const q = params.find((p) => p.startsWith('q='));
      const value = q ? Number.parseFloat(q.slice(2)) : 1;
      return { type: type.toLowerCase(), q: Number.isNaN(value) ? 1 : value, i };
    })
    .sort((a, b) => b.q - a.q || a.i - b.i);
  const matches = (pattern: string, type: string) => {
    const [pm, ps] = pattern.split('/');
    const [tm, ts] = type.split('/');
    if (ps === undefined) return false;
    return (pm === tm || pm === '*') && (ps === ts || ps === '*');
  };
  for (const e of entries) {
    if (matches(e.type, JSON_TYPE)) return 'json';
    if (matches(e.type, HTML_TYPE)) return 'html';
  }
  throw new ApiError(
    { code: 'NOT_ACCEPTABLE', message: `the request is not acceptable, the accept header did not have any supported options: ${accept.slice(0, 200)} (supported: ${JSON_TYPE}, ${HTML_TYPE})`, status: 406 },
    {},
  );
}

const unsupportedMediaType = (type: string) =>
  new ApiError({ code: 'UNSUPPORTED_MEDIA_TYPE', message: `the content type: ${type.slice(0, 100)}, is not supported (supported: ${FORM_TYPE}, ${JSON_TYPE})`, status: 415 });

/** The form body (`application/x-www-form-urlencoded`); an empty one when there is none. */
async function formBody(req: ServiceRequest): Promise<Params> {
  if (!hasBody(req)) return {};
  const buf = await readBody(req, MAX_BODY_BYTES);
  return parseParams(buf.toString('utf8'));
}

/** A login endpoint's body: JSON or form (else 415), as names → values. JSON keeps objects (envInfo, sdkInfo). */
async function loginBody(req: ServiceRequest): Promise<{ params: Params; json: Record<string, unknown> }> {
  const type = mediaTypeOf(req) ?? '';
  if (type === FORM_TYPE) return { params: await formBody(req), json: {} };
  if (!isJsonMediaType(type)) {
    if (!hasBody(req) && type === '') return { params: {}, json: {} };
    throw unsupportedMediaType(type);
  }
  const body = await readJsonBody(req);
  if (body === undefined) return { params: {}, json: {} };
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw ApiError.of('COULD_NOT_PARSE_BODY');
  assertStorableRequest({ body });
  const json = body as Record<string, unknown>;
  const params: Params = {};
  for (const [k, v] of Object.entries(json)) {
    if (typeof v === 'string') params[k] = [v];
    else if (Array.isArray(v)) params[k] = v.filter((x): x is string => typeof x === 'string');
  }
  return { params, json };
}

const objectOf = (v: unknown): Record<string, unknown> | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);

/** Form fields `envArch`, `sdkVersion`… as `{arch}`, `{version}` (OpenZiti's `Translate`). */
function prefixed(params: Params, prefix: 'env' | 'sdk'): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params)) {
    if (k.length > prefix.length && k.startsWith(prefix) && v[0] !== undefined) out[k[prefix.length]!.toLowerCase() + k.slice(prefix.length + 1)] = v[0];
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

function redirect(res: ServerResponse, location: string, headers: Record<string, string> = {}): void {
  res.statusCode = 302;
  res.setHeader('location', headerValue(location));
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, headerValue(v));
  sendBody(res, '', 'text/plain');
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.statusCode = status;
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, headerValue(v));
  sendJson(res, body);
}

function text(res: ServerResponse, status: number, body: string, type = 'text/plain'): void {
  res.statusCode = status;
  sendBody(res, body, type);
}

function oauthError(res: ServerResponse, err: OAuthError): void {
  json(res, err.status, { error: err.error, error_description: err.description }, { 'cache-control': 'no-store', pragma: 'no-cache' });
}

/** The client of a token or revoke request: `client_id` of the form, else HTTP Basic's user. */
function clientIdOf(req: ServiceRequest, form: Params): string | undefined {
  const id = first(form, 'client_id');
  if (id) return id;
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && /^basic /i.test(auth)) {
    const decoded = Buffer.from(auth.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    try {
      return decodeURIComponent(colon < 0 ? decoded : decoded.slice(0, colon));
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** The cookie that carries an auth request's login binding back to its primary login's caller (a browser). */
const bindingCookie = (authRequestId: string) => `ziti-oidc-login-${authRequestId}`;

/** `Set-Cookie` of the login binding: for the login pages only, never sent cross-site, gone with the request. */
const setBindingCookie = (authRequestId: string, binding: string) =>
  `${bindingCookie(authRequestId)}=${binding}; Path=/oidc/login; Max-Age=${AUTH_REQUEST_SECONDS}; HttpOnly; Secure; SameSite=Strict`;

/** The login binding of `authRequestId` from the request's cookies, if it sent one. */
function bindingOf(req: ServiceRequest, authRequestId: string | undefined): string | undefined {
  if (!isRandomId(authRequestId)) return undefined;
  const name = bindingCookie(authRequestId);
  const header = req.headers.cookie;
  for (const pair of (Array.isArray(header) ? header.join(';') : header ?? '').split(';')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}

const LOGIN_METHODS: Record<string, 'password' | 'cert' | 'ext-jwt'> = { password: 'password', username: 'password', cert: 'cert', 'ext-jwt': 'ext-jwt' };

/**
 * The `/oidc` HTTP surface (OIDC.md "Endpoints"), served through http-kit's raw hook: OAuth errors
 * as `{error, error_description}`, login errors in the Ziti envelope, HTML pages on request.
 */
export function oidcHttp(provider: OidcProvider, internalSecret: string, log: Logger): RawHandler {
  async function serve(req: ServiceRequest, res: ServerResponse, requestId: string): Promise<void> {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = (q < 0 ? url : url.slice(0, q)).slice('/oidc'.length) || '/';
    const query = q < 0 ? {} : parseParams(url.slice(q + 1));
    const method = req.method ?? 'GET';
    const host = publicHost(req);
    const issuer = `https://${host}/oidc`;
    const is = (...methods: string[]) => {
      if (!methods.includes(method)) throw ApiError.of('METHOD_NOT_ALLOWED');
    };

    if (path === '/.well-known/openid-configuration') return is('GET', 'HEAD'), json(res, 200, provider.discovery(issuer));
    if (path === '/keys') return is('GET', 'HEAD'), json(res, 200, await provider.jwks(), { 'cache-control': 'max-age=60' });
    if (path === '/logged-out') return is('GET', 'HEAD'), text(res, 200, 'signed out successfully');

    if (path === '/authorize') {
      is('GET', 'POST');
      const params: Params = { ...query };
      if (method === 'POST' && mediaTypeOf(req) === FORM_TYPE) for (const [k, v] of Object.entries(await formBody(req))) params[k] ??= v;
      const has = clientCertChainOf(req, internalSecret).length > 0;
      const got = (n: string) => first(params, n);
      const { location } = await provider.authorize(
        issuer,
        {
          client_id: got('client_id'), redirect_uri: got('redirect_uri'), response_type: got('response_type'), scope: got('scope'),
          code_challenge: got('code_challenge'), code_challenge_method: got('code_challenge_method'), state: got('state'), nonce: got('nonce'),
          audience: got('audience'), method: got('method'), prompt: got('prompt'), configTypes: params.configTypes ?? [],
        },
        has,
      );
      return redirect(res, location);
    }
    if (path === '/authorize/callback') {
      is('GET');
      const { location } = await provider.callback(first(query, 'id') ?? first(query, 'authRequestID'), first(query, 'ticket'));
      return redirect(res, location);
    }

    if (path.startsWith('/login/')) return login(req, res, path.slice('/login/'.length), query, host, requestId);

    if (path === '/oauth/token') {
      is('POST');
      const form = await oauthForm(req);
      const answer = await provider.token(issuer, firstValues(form), clientIdOf(req, form), clientCertChainOf(req, internalSecret));
      return json(res, 200, answer, { 'cache-control': 'no-store', pragma: 'no-cache' });
    }
    // RFC 7009 revocation; also at `/oauth/revoke`, where ZAC's logout sends its refresh token.
    if (path === '/revoke' || path === '/oauth/revoke') {
      is('POST');
      const form = await oauthForm(req);
      provider.client(clientIdOf(req, form));
      await provider.revoke(first(form, 'token'));
      return text(res, 200, '');
    }
    if (path === '/end_session') {
      is('GET', 'POST');
      const params: Params = { ...query };
      if (method === 'POST' && mediaTypeOf(req) === FORM_TYPE) Object.assign(params, await formBody(req));
      const { location } = await provider.endSession(issuer, {
        id_token_hint: first(params, 'id_token_hint'),
        post_logout_redirect_uri: first(params, 'post_logout_redirect_uri'),
        state: first(params, 'state'),
      });
      return redirect(res, location);
    }
    if (path === '/userinfo') {
      is('GET', 'POST');
      const info = await provider.userinfo(bearerTokensOf(req)[0]);
      if (!info) return json(res, 401, { error: 'invalid_token', error_description: 'the access token is invalid' }, { 'www-authenticate': 'Bearer error="invalid_token"' });
      return json(res, 200, info);
    }
    throw ApiError.of('NOT_FOUND');
  }

  /** The form of a token or revoke request: `application/x-www-form-urlencoded` only. */
  async function oauthForm(req: ServiceRequest): Promise<Params> {
    const type = mediaTypeOf(req);
    if (type !== FORM_TYPE) throw new OAuthError('invalid_request', 'the request body must be application/x-www-form-urlencoded');
    return formBody(req);
  }

  async function login(req: ServiceRequest, res: ServerResponse, step: string, query: Params, host: string, requestId: string): Promise<void> {
    const method = req.method ?? 'GET';
    const queryId = first(query, 'authRequestID') ?? first(query, 'id');
    // The ticket goes only to the caller of the step that completed the request (OIDC.md "Login endpoints").
    const callback = (id: string, ticket: string) => `https://${host}/oidc/authorize/callback?id=${id}&ticket=${ticket}`;
    const finish = (outcome: LoginOutcome, as: 'json' | 'html') => {
      if (outcome.binding) res.setHeader('set-cookie', setBindingCookie(outcome.request.id, outcome.binding));
      if (outcome.done) return redirect(res, callback(outcome.request.id, outcome.ticket!));
      if (outcome.challenge) res.setHeader('www-authenticate', headerValue(outcome.challenge));
      if (outcome.totpOpen) res.setHeader('totp-required', 'true');
      if (as === 'html') return text(res, 200, totpPage(outcome.request.id), HTML_TYPE);
      return json(res, 200, { authQueries: outcome.queries });
    };

    if (step === 'auth-queries') {
      if (method !== 'GET') throw ApiError.of('METHOD_NOT_ALLOWED');
      const request = await provider.request(first(query, 'id'));
      const outcome = await provider.outcome(request);
      if (!outcome.done && outcome.totpOpen) res.setHeader('totp-required', 'true');
      return json(res, 200, { authQueries: outcome.done ? [] : outcome.queries });
    }

    const primary = LOGIN_METHODS[step];
    if (primary) {
      if (method === 'GET') {
        const id = first(query, 'authRequestID') ?? '';
        // Never an unchecked value in a header: a malformed id names no auth request.
        if (id !== '' && !isRandomId(id)) throw ApiError.of('INVALID_AUTH');
        res.setHeader('auth-request-id', id);
        if (primary === 'password') return text(res, 200, loginPage(id), HTML_TYPE);
        return text(res, 200, 'please POST to this URL');
      }
      if (method !== 'POST') throw ApiError.of('METHOD_NOT_ALLOWED');
      const as = negotiate(req.headers.accept);
      const { params, json: body } = await loginBody(req);
      const id = first(params, 'id') ?? queryId;
      const input: LoginInput = {
        username: first(params, 'username'),
        password: first(params, 'password'),
        configTypes: params.configTypes,
        sdkInfo: objectOf(body.sdkInfo) ?? prefixed(params, 'sdk'),
        envInfo: objectOf(body.envInfo) ?? prefixed(params, 'env'),
        csrPem: first(params, 'csrPem'),
        bearerTokens: bearerTokensOf(req),
        clientCertChain: primary === 'cert' ? clientCertChainOf(req, internalSecret) : [],
        ipAddress: clientIpOf(req),
      };
      try {
        return finish(await provider.login(id, primary, input), as);
      } catch (err) {
        if (as !== 'html' || !(err instanceof ApiError) || err.status >= 500) throw err;
        for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, headerValue(v));
        if (primary === 'password') return text(res, err.status, loginPage(id ?? '', err.message), HTML_TYPE);
        return text(res, err.status, err.message);
      }
    }

    if (step === 'totp') {
      if (method !== 'POST') throw ApiError.of('METHOD_NOT_ALLOWED');
      const as = negotiate(req.headers.accept);
      const { params } = await loginBody(req);
      const id = first(params, 'id') ?? queryId;
      try {
        return finish(await provider.totp(id, first(params, 'code') ?? ''), as);
      } catch (err) {
        if (as !== 'html' || !(err instanceof ApiError) || err.status >= 500) throw err;
        return text(res, err.status, totpPage(id ?? '', err.message), HTML_TYPE);
      }
    }

    if (step === 'totp/enroll') {
      negotiate(req.headers.accept);
      const { params } = await loginBody(req);
      const id = first(params, 'id') ?? queryId;
      if (method === 'POST') {
        const { mfa, identityName } = await provider.startTotpEnrollment(id, bindingOf(req, id));
        return json(res, 201, mfaDetail(mfa, identityName));
      }
      if (method === 'DELETE') {
        await provider.deleteTotpEnrollment(id, bindingOf(req, id), first(params, 'code') ?? '');
        return json(res, 200, {});
      }
      throw ApiError.of('METHOD_NOT_ALLOWED');
    }

    if (step === 'totp/enroll/verify') {
      if (method !== 'POST') throw ApiError.of('METHOD_NOT_ALLOWED');
      const as = negotiate(req.headers.accept);
      const { params } = await loginBody(req);
      const id = first(params, 'id') ?? queryId;
      return finish(await provider.verifyTotpEnrollment(id, bindingOf(req, id), first(params, 'code') ?? ''), as);
    }
    void requestId;
    throw ApiError.of('NOT_FOUND');
  }

  return {
    prefix: '/oidc',
    async handle(req, res, requestId) {
      try {
        await serve(req, res, requestId);
      } catch (err) {
        if (err instanceof OAuthError) return oauthError(res, err);
        sendError(res, err, requestId, log);
      }
    },
  };
}

/** The first value of each form field. */
function firstValues(p: Params): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(p)) if (v[0] !== undefined) out[k] = v[0];
  return out;
}
