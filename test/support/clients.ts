import type { HttpClient, HttpResponse } from './http.js';
import type { ApiName } from './spec-validator.js';

/**
 * Small typed clients per resource, in the manner of OpenZiti's `tests/` helpers. They return the
 * raw `HttpResponse` (never throw on 4xx/5xx); assertions stay in the tests.
 */

export const BASE: Record<ApiName, string> = { client: '/edge/client/v1', management: '/edge/management/v1' };

export type Query = Record<string, string | number | boolean | readonly string[] | undefined>;

export function queryString(q?: Query): string {
  if (!q) return '';
  const sp = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) v.forEach((x) => sp.append(k, x));
    else sp.append(k, String(v));
  }
  const s = sp.toString().replace(/\+/g, '%20');
  return s ? `?${s}` : '';
}

/** CRUD operations of one entity collection (`/identities`, `/api-sessions`, …). */
export class Resource {
  constructor(
    private readonly api: EdgeApi,
    readonly plural: string,
  ) {}

  list(query?: Query): Promise<HttpResponse> {
    return this.api.call('GET', `/${this.plural}${queryString(query)}`);
  }
  get(id: string): Promise<HttpResponse> {
    return this.api.call('GET', `/${this.plural}/${encodeURIComponent(id)}`);
  }
  create(body: unknown): Promise<HttpResponse> {
    return this.api.call('POST', `/${this.plural}`, body);
  }
  update(id: string, body: unknown): Promise<HttpResponse> {
    return this.api.call('PUT', `/${this.plural}/${encodeURIComponent(id)}`, body);
  }
  patch(id: string, body: unknown): Promise<HttpResponse> {
    return this.api.call('PATCH', `/${this.plural}/${encodeURIComponent(id)}`, body);
  }
  delete(id: string): Promise<HttpResponse> {
    return this.api.call('DELETE', `/${this.plural}/${encodeURIComponent(id)}`);
  }
}

/** One Edge API (client or management) as seen with one session token (or none). */
export class EdgeApi {
  readonly identities = new Resource(this, 'identities');
  readonly identityTypes = new Resource(this, 'identity-types');
  readonly apiSessions = new Resource(this, 'api-sessions');
  readonly specs = new Resource(this, 'specs');
  readonly currentApiSession = {
    get: () => this.call('GET', '/current-api-session'),
    delete: () => this.call('DELETE', '/current-api-session'),
  };
  readonly currentIdentity = {
    get: () => this.call('GET', '/current-identity'),
  };

  constructor(
    readonly http: HttpClient,
    readonly api: ApiName,
    readonly token?: string,
  ) {}

  get base(): string {
    return BASE[this.api];
  }

  withToken(token: string | undefined): EdgeApi {
    return new EdgeApi(this.http, this.api, token);
  }

  /** `path` is relative to the API base, query included. */
  call(method: string, path: string, json?: unknown, headers?: Record<string, string>): Promise<HttpResponse> {
    return this.http.request({ method, path: `${this.base}${path}`, json, token: this.token, headers });
  }

  version(): Promise<HttpResponse> {
    return this.call('GET', '/version');
  }
}

export interface Login {
  res: HttpResponse;
  /** The session token (`data.token`), when the login succeeded. */
  token?: string;
  /** The same API with that token. */
  session: EdgeApi;
}

/** `POST /authenticate?method=password`. */
export const auth = {
  async login(http: HttpClient, username: string, password: string, api: ApiName = 'management'): Promise<Login> {
    const res = await http.request({ method: 'POST', path: `${BASE[api]}/authenticate?method=password`, json: { username, password } });
    const token = res.status === 200 ? (res.body?.data?.token as string | undefined) : undefined;
    return { res, token, session: new EdgeApi(http, api, token) };
  },
};

let counter = 0;
/** A name no other test uses: `<prefix>-<pid>-<n>-<random>`. */
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}
