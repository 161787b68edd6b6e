import { X509Certificate } from 'node:crypto';
import type { ApiName } from '@ziti/api-contract';
import { formatTimestamp, listEnvelope } from '@ziti/errors';
import { API_BASES } from '@ziti/http-kit';
import type { LocalHandler } from './informational.js';

export interface ControllerInfo {
  /** This controller's id and name (the gateway's instance id). */
  id: string;
  /** `host:port` clients reach the APIs at. */
  advertisedAddress: string;
  /** The server certificate served on the edge APIs (leaf first). */
  certPem: () => string;
  startedAt: Date;
}

const API_BINDINGS: Record<string, ApiName> = { 'edge-client': 'client', 'edge-management': 'management' };

function page(raw: string | null, fallback: number): number {
  if (raw === null || raw.trim() === '') return fallback;
  const n = Number(raw);
  return Number.isInteger(n) && n >= 0 ? n : fallback;
}

/**
 * `GET /controllers` (both APIs): this deployment's controller, as one `controllerDetail` with the
 * addresses of its edge APIs (SDKs read `apiAddresses[<binding>][].{url,version}` for failover).
 * There is one controller however many gateway replicas serve it; the filter is not evaluated.
 */
export function controllersHandler(info: ControllerInfo): LocalHandler {
  return ({ req }) => {
    const leafPem = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----\n?/.exec(info.certPem())?.[0] ?? '';
    const fingerprint = leafPem ? new X509Certificate(leafPem).fingerprint.replace(/:/g, '').toLowerCase() : '';
    const at = formatTimestamp(info.startedAt);
    const apiAddresses = Object.fromEntries(
      Object.entries(API_BINDINGS).map(([binding, api]) => [binding, [{ url: `https://${info.advertisedAddress}${API_BASES[api]}`, version: 'v1' }]]),
    );
    const detail = {
      _links: { self: { href: `./controllers/${info.id}` } },
      apiAddresses,
      certPem: leafPem,
      createdAt: at,
      ctrlAddress: null,
      fingerprint,
      id: info.id,
      isOnline: true,
      isPreferredLeader: true,
      lastJoinedAt: at,
      name: info.id,
      tags: {},
      updatedAt: at,
    };
    const query = new URL(req.url ?? '/', 'https://x').searchParams;
    const limit = page(query.get('limit'), 10);
    const offset = page(query.get('offset'), 0);
    const items = [detail].slice(offset, offset + limit);
    return { body: listEnvelope(items, { limit, offset, totalCount: 1 }) };
  };
}
