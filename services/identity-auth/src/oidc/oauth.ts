/** OAuth 2.0 pieces the provider's endpoints share: its error, grant and token types, scopes, redirect URIs. */

/** An OAuth error (RFC 6749 §5.2): `{error, error_description}` with its status. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
  }
}

export const oauth = (error: string, description: string, status = 400) => new OAuthError(error, description, status);

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
export const REFRESH_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:refresh_token';
export const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token';
export const SCOPES = ['openid', 'offline_access'];

/** `*` as the port of an allowed URI matches any port; everything else matches exactly. */
export function uriAllowed(uri: string, allowed: readonly string[] | undefined): boolean {
  for (const pattern of allowed ?? []) {
    if (pattern === uri) return true;
    const star = pattern.indexOf(':*');
    if (star < 0) continue;
    const prefix = pattern.slice(0, star + 1);
    const suffix = pattern.slice(star + 2);
    if (!uri.startsWith(prefix) || !uri.endsWith(suffix)) continue;
    const port = uri.slice(prefix.length, uri.length - suffix.length);
    if (/^[0-9]{1,5}$/.test(port) && Number(port) <= 65535) return true;
  }
  return false;
}

/** `uri` with these query parameters appended in order (undefined and empty ones left out). */
export function withParams(uri: string, params: Record<string, string | undefined>): string {
  const q = Object.entries(params)
    .filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '')
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
  if (!q) return uri;
  const hash = uri.indexOf('#');
  const base = hash < 0 ? uri : uri.slice(0, hash);
  return `${base}${base.includes('?') ? '&' : '?'}${q}`;
}
