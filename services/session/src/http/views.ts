import { formatTimestamp } from '@ziti/errors';
import type { Session } from '../domain/model.js';

const ref = (entity: string, id: string, name?: string) => ({
  _links: { self: { href: `./${entity}/${id}` } },
  entity,
  id,
  ...(name !== undefined ? { name } : {}),
});

/** `sessionDetail` (client); `sessionManagementDetail` adds `servicePolicies`. */
export function sessionDetail(s: Session, management = false): Record<string, unknown> {
  return {
    _links: { self: { href: `./sessions/${s.id}` }, 'route-path': { href: `./sessions/${s.id}/route-path` } },
    createdAt: formatTimestamp(s.createdAt),
    id: s.id,
    tags: s.tags,
    updatedAt: formatTimestamp(s.updatedAt),
    apiSession: ref('api-sessions', s.apiSessionId),
    apiSessionId: s.apiSessionId,
    edgeRouters: s.edgeRouters,
    identityId: s.identityId,
    service: ref('services', s.serviceId, s.serviceName),
    serviceId: s.serviceId,
    token: s.token,
    type: s.type,
    ...(management ? { servicePolicies: s.servicePolicyIds.map((id) => ref('service-policies', id)) } : {}),
  };
}
