import type { IncomingMessage } from 'node:http';
import type { ApiName, EdgeApiName, RouteDef } from '@ziti/api-contract';
import { ApiError, dataEnvelope, formatTimestamp } from '@ziti/errors';
import { API_BASES, type RequestPrincipal } from '@ziti/http-kit';
import yaml from 'js-yaml';
import { SPEC_IDS, generateSpec } from '../openapi/generate.js';
import type { Json } from '../openapi/schema.js';
import { OIDC_BASE } from './paths.js';

/** What the gateway reports about itself in `/version`. */
export interface BuildInfo {
  version: string;
  revision: string;
  buildDate: Date;
  runtimeVersion: string;
}

export interface LocalCall {
  api: ApiName;
  params: Record<string, string>;
  req: IncomingMessage;
  /** The caller, on routes that are not anonymous. */
  principal?: RequestPrincipal;
}

export interface LocalResult {
  status?: number;
  body?: unknown;
  raw?: string;
  contentType?: string;
}

/** A route the gateway answers itself; may answer asynchronously (the integrity routes read the shared cache). */
export type LocalHandler = (call: LocalCall) => LocalResult | Promise<LocalResult>;

export interface InformationalOptions {
  build: BuildInfo;
  /** `host:port` of the public listener, as clients reach it. */
  advertisedAddress: string;
  routes: readonly RouteDef[];
  models: Readonly<Record<string, unknown>>;
}

/** Every capability this controller knows of, enabled or not (`/enumerated-capabilities`). */
export const ENUMERATED_CAPABILITIES = ['OIDC_AUTH', 'HA_CONTROLLER', 'OIDC_AUTH_WITH_CSR'];

/**
 * The capabilities `/version` lists: OIDC authentication at `/oidc` (with API session
 * certificates from a login's CSR). OpenZiti's clients switch to OIDC as soon as they see them.
 */
export const CAPABILITIES = ['OIDC_AUTH', 'OIDC_AUTH_WITH_CSR'];

/** `buildDate` as the controller prints it: `2020-02-11 16:09:08` (UTC). */
function buildDateText(d: Date): string {
  return d.toISOString().slice(0, 19).replace('T', ' ');
}

function wantsYaml(req: IncomingMessage): boolean {
  return /\b(text|application)\/(x-)?yaml\b/i.test(req.headers.accept ?? '');
}

/**
 * The informational operations the gateway serves on both APIs, and the generated swagger
 * documents (cached per API; the contract does not change while the process runs).
 */
export function informationalHandlers(opts: InformationalOptions): {
  handlers: Record<string, LocalHandler>;
  specDocument(api: EdgeApiName): Json;
  specJson(api: EdgeApiName): string;
} {
  const { build, advertisedAddress } = opts;
  const baseUrl = (api: ApiName) => `https://${advertisedAddress}${API_BASES[api]}`;
  const apiVersion = (api: ApiName) => ({ v1: { path: API_BASES[api], apiBaseUrls: [baseUrl(api)] } });
  // The OIDC provider (passed through to identity-auth), advertised as the `edge-oidc` API.
  const oidcVersion = { v1: { path: OIDC_BASE, apiBaseUrls: [`https://${advertisedAddress}${OIDC_BASE}`] } };

  const documents = new Map<EdgeApiName, { doc: Json; json: string; yaml?: string }>();
  const spec = (api: EdgeApiName) => {
    let entry = documents.get(api);
    if (!entry) {
      const doc = generateSpec({ api, routes: opts.routes, models: opts.models, host: advertisedAddress, version: build.version });
      entry = { doc, json: JSON.stringify(doc) };
      documents.set(api, entry);
    }
    return entry;
  };
  const apiOfSpec = (id: string | undefined): EdgeApiName => {
    const api = (Object.keys(SPEC_IDS) as EdgeApiName[]).find((a) => SPEC_IDS[a] === id);
    if (!api) throw ApiError.notFound();
    return api;
  };
  const specDetail = (api: EdgeApiName) => {
    const id = SPEC_IDS[api];
    const at = formatTimestamp(build.buildDate);
    return { _links: { self: { href: `./specs/${id}` }, spec: { href: `./specs/${id}/spec` } }, createdAt: at, id, name: id, tags: {}, updatedAt: at };
  };

  const version: LocalHandler = () => ({
    body: dataEnvelope({
      apiVersions: { edge: apiVersion('client'), 'edge-client': apiVersion('client'), 'edge-management': apiVersion('management'), 'edge-oidc': oidcVersion },
      buildDate: buildDateText(build.buildDate),
      capabilities: [...CAPABILITIES],
      revision: build.revision,
      runtimeVersion: build.runtimeVersion,
      version: build.version,
    }),
  });

  const handlers: Record<string, LocalHandler> = {
    listRoot: version,
    listVersion: version,
    listEnumeratedCapabilities: () => ({ body: dataEnvelope([...ENUMERATED_CAPABILITIES]) }),
    listProtocols: () => ({ body: dataEnvelope({ https: { address: advertisedAddress } }) }),
    listSpecs: ({ api }) => ({ body: dataEnvelope(api === 'fabric' ? [] : [specDetail(api)]) }),
    detailSpec: ({ params }) => ({ body: dataEnvelope(specDetail(apiOfSpec(params.id))) }),
    detailSpecBody: ({ params, req }) => {
      const entry = spec(apiOfSpec(params.id));
      if (wantsYaml(req)) {
        entry.yaml ??= yaml.dump(entry.doc, { noRefs: true, lineWidth: -1 });
        return { raw: entry.yaml, contentType: 'text/yaml' };
      }
      return { raw: entry.json, contentType: 'application/json' };
    },
  };
  return { handlers, specDocument: (api) => spec(api).doc, specJson: (api) => spec(api).json };
}
