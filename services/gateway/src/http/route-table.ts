import { type ApiName, type RouteDef, pathPattern } from '@ziti/api-contract';
import { ApiError } from '@ziti/errors';

/** A matched operation and its decoded path parameters. */
export interface RouteMatch {
  route: RouteDef;
  params: Record<string, string>;
}

interface Entry {
  route: RouteDef;
  pattern: RegExp;
  /** Count of `{param}` segments: fewer is more specific (`/specs/x` beats `/{a}/{b}`). */
  params: number;
}

function decode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * The contract's operations per API, matched by path template then verb. HEAD is answered as GET.
 */
export class RouteTable {
  private readonly byApi: Record<ApiName, Entry[]> = { client: [], management: [] };

  constructor(routes: readonly RouteDef[]) {
    for (const route of routes) {
      const entry: Entry = { route, pattern: pathPattern(route.path), params: (route.path.match(/\{/g) ?? []).length };
      for (const api of route.apis) this.byApi[api].push(entry);
    }
    for (const list of Object.values(this.byApi)) list.sort((a, b) => a.params - b.params);
  }

  /** The operation for `method` at `relative` (path under the API base); 404 or 405 otherwise. */
  match(api: ApiName, method: string, relative: string): RouteMatch {
    const verb = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
    let pathKnown = false;
    for (const entry of this.byApi[api]) {
      const m = entry.pattern.exec(relative);
      if (!m) continue;
      pathKnown = true;
      if (entry.route.method !== verb) continue;
      const params: Record<string, string> = {};
      for (const [k, v] of Object.entries(m.groups ?? {})) params[k] = decode(v);
      return { route: entry.route, params };
    }
    throw ApiError.of(pathKnown ? 'METHOD_NOT_ALLOWED' : 'NOT_FOUND');
  }
}
