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
  /** Position in the contract: among equally specific templates, the earlier one wins. */
  order: number;
}

function decode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** The first segment of a path under an API base (`/identities/x` → `identities`). */
function firstSegment(relative: string): string {
  const end = relative.indexOf('/', 1);
  return end < 0 ? relative.slice(1) : relative.slice(1, end);
}

/**
 * The contract's operations per API, matched by path template then verb. HEAD is answered as GET.
 * Templates are grouped by their first segment, so a request is tried only against the few that can
 * match it; within a group, templates with fewer parameters are tried first.
 */
export class RouteTable {
  private readonly byApi: Record<ApiName, { byFirst: Map<string, Entry[]>; wild: Entry[] }> = {
    client: { byFirst: new Map(), wild: [] },
    management: { byFirst: new Map(), wild: [] },
    fabric: { byFirst: new Map(), wild: [] },
  };

  constructor(routes: readonly RouteDef[]) {
    const all: Record<ApiName, Entry[]> = { client: [], management: [], fabric: [] };
    for (const [order, route] of routes.entries()) {
      const entry: Entry = { route, pattern: pathPattern(route.path), params: (route.path.match(/\{/g) ?? []).length, order };
      for (const api of route.apis) all[api].push(entry);
    }
    for (const api of Object.keys(all) as ApiName[]) {
      const index = this.byApi[api];
      const isWild = (e: Entry) => firstSegment(e.route.path).startsWith('{');
      index.wild = all[api].filter(isWild);
      for (const entry of all[api]) {
        if (isWild(entry)) continue;
        const key = firstSegment(entry.route.path);
        if (!index.byFirst.has(key)) index.byFirst.set(key, [...index.wild]);
        index.byFirst.get(key)!.push(entry);
      }
      for (const list of [index.wild, ...index.byFirst.values()]) list.sort((a, b) => a.params - b.params || a.order - b.order);
    }
  }

  /** The operation for `method` at `relative` (path under the API base); 404 or 405 otherwise. */
  match(api: ApiName, method: string, relative: string): RouteMatch {
    const verb = method === 'HEAD' || method === 'head' ? 'GET' : method.toUpperCase();
    const index = this.byApi[api];
    const candidates = index.byFirst.get(firstSegment(relative)) ?? index.wild;
    let pathKnown = false;
    for (const entry of candidates) {
      const m = entry.pattern.exec(relative);
      if (!m) continue;
      pathKnown = true;
      if (entry.route.method !== verb) continue;
      const params: Record<string, string> = {};
      if (m.groups) for (const k in m.groups) params[k] = decode(m.groups[k]!);
      return { route: entry.route, params };
    }
    throw ApiError.of(pathKnown ? 'METHOD_NOT_ALLOWED' : 'NOT_FOUND');
  }
}
