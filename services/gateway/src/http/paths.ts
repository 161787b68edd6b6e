import { API_NAMES, type ApiName } from '@ziti/api-contract';
import { API_BASES } from '@ziti/http-kit';

/** Where a public request path leads once the OpenZiti aliases are applied. */
export interface NormalisedPath {
  /** The full normalised path, as forwarded upstream (e.g. `/edge/client/v1/version`). */
  path: string;
  /** The API it belongs to; undefined for paths outside every API (answered 404). */
  api?: ApiName;
  /** The path relative to the API base (`/version`); undefined when `api` is. */
  relative?: string;
}

const LEGACY_CLIENT_BASE = '/edge/v1';
/** First segments that are not prefixed with the client base (controller `versions.go`). */
const UNPREFIXED_ROOTS = new Set(['edge', 'fabric', '.well-known']);
/** Root `.well-known` paths that the client API also serves (EST CA certificates). */
const ROOT_WELL_KNOWN = ['/.well-known/est/cacerts'];

function under(path: string, base: string): boolean {
  return path === base || path.startsWith(`${base}/`);
}

/**
 * Applies the routing quirks of the OpenZiti controller to a request path (without query):
 * - doubled slashes collapse (`/fabric/v1//routers` → `/fabric/v1/routers`);
 * - `/edge/v1/*` is the legacy client base: it becomes `/edge/client/v1/*`;
 * - a path whose first segment is not `edge`, `fabric` or `.well-known` gets `/edge/client/v1`
 *   prefixed (old SDKs call `/authenticate`, `/version`, `/`);
 * - `/.well-known/est/cacerts` at the root is the client API's;
 * - an Edge API base alone (with or without a trailing slash) is that API's `/version`;
 * - `/fabric/v1/*` is the fabric API.
 */
export function normalisePath(rawPath: string): NormalisedPath {
  let path = rawPath.replace(/\/{2,}/g, '/');
  if (!path.startsWith('/')) path = `/${path}`;

  if (under(path, LEGACY_CLIENT_BASE)) path = API_BASES.client + path.slice(LEGACY_CLIENT_BASE.length);
  const first = path.split('/')[1] ?? '';
  if (!UNPREFIXED_ROOTS.has(first)) path = API_BASES.client + (path === '/' ? '' : path);
  if (ROOT_WELL_KNOWN.some((p) => path === p || path === `${p}/`)) path = API_BASES.client + path;

  for (const api of API_NAMES) {
    const base = API_BASES[api];
    if (api !== 'fabric' && (path === base || path === `${base}/`)) path = `${base}/version`;
    if (under(path, base)) return { path, api, relative: path.slice(base.length) };
  }
  return { path };
}

/** Where identity-auth's OpenID Connect provider is served (passed through unchanged, outside both Edge APIs). */
export const OIDC_BASE = '/oidc';

/**
 * True for `/oidc` and `/oidc/*` (`path` with doubled slashes collapsed): the OIDC provider's
 * paths, passed through to identity-auth before {@link normalisePath} would prefix the client
 * base. Root `/.well-known/openid-configuration` is not one of them (404, as in OpenZiti).
 */
export function isOidcPath(path: string): boolean {
  return under(path, OIDC_BASE);
}

/** Splits a request URL into its path and its query string (with the leading `?`, or ''). */
export function splitUrl(url: string): { path: string; search: string } {
  if (!url.startsWith('/')) {
    // absolute-form request target (`GET https://host/path HTTP/1.1`)
    try {
      const u = new URL(url);
      return { path: u.pathname, search: u.search };
    } catch {
      return { path: `/${url}`, search: '' };
    }
  }
  const q = url.indexOf('?');
  return q < 0 ? { path: url, search: '' } : { path: url.slice(0, q), search: url.slice(q) };
}
