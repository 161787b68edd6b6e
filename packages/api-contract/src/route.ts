import type { TObject, TSchema } from '@sinclair/typebox';

/** The public APIs: the two Edge APIs and the fabric API (`/fabric/v1`, what the admin console reads of it). */
export type ApiName = 'client' | 'management' | 'fabric';

/** The two Edge APIs, the ones with generated swagger documents (`/specs`) and informational routes. */
export type EdgeApiName = Exclude<ApiName, 'fabric'>;
export const EDGE_APIS: readonly EdgeApiName[] = ['client', 'management'];
export const API_NAMES: readonly ApiName[] = ['client', 'management', 'fabric'];

/** The bounded context that serves a route; the gateway proxies the route to it. */
export type Owner = 'gateway' | 'identity-auth' | 'pki-enrollment' | 'policy' | 'session' | 'posture' | 'fabric';

/**
 * Who may call a route.
 * - anonymous: no session needed (a bad token is ignored, and no WWW-Authenticate is sent).
 * - partial: any valid API session, even one with MFA still outstanding.
 * - authenticated: a fully authenticated API session.
 * - admin: an admin identity (`IsAdmin` in the controller).
 * - management: `DefaultManagementAccess`: admin, or `admin_readonly` for reads, or the entity
 *   permission `<permission>` / `<permission>.<action>`.
 */
export type Access = 'anonymous' | 'partial' | 'authenticated' | 'admin' | 'management';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One operation of the public API: the single source for routing, validation and the OpenAPI documents. */
export interface RouteDef {
  operationId: string;
  method: HttpMethod;
  /** Path relative to the API base, with `{param}` placeholders, e.g. `/identities/{id}`. */
  path: string;
  apis: readonly ApiName[];
  owner: Owner;
  access: Access;
  /** Entity permission name for `management` access (e.g. `identity`). */
  permission?: string;
  tags: readonly string[];
  summary: string;
  /** Query parameters (all optional strings on the wire unless the schema says otherwise). */
  query?: TObject;
  /** JSON request body. */
  body?: TSchema;
  /**
   * The body may be absent (no content at all): the handler then gets `undefined`. A body that is
   * sent is still validated against `body`. E.g. `POST /authenticate?method=cert`, which the C SDK
   * posts without a body.
   */
  bodyOptional?: boolean;
  /** Success status and the schema of its body (the whole envelope). */
  success: { status: number; schema?: TSchema; contentType?: string };
}

export function route(def: RouteDef): RouteDef {
  return def;
}

/** Path template → RegExp with named groups; `{id}` matches one segment. */
export function pathPattern(path: string): RegExp {
  const escaped = path
    .split('/')
    .map((seg) => (/^\{[A-Za-z0-9_]+\}$/.test(seg) ? `(?<${seg.slice(1, -1)}>[^/]+)` : seg.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${escaped}/?$`);
}

/** Express-style path (`/identities/:id`) for a template. */
export function expressPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}
