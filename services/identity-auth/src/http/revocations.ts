import { createdEnvelope, dataEnvelope, formatTimestamp } from '@ziti/errors';
import type { Handler } from '@ziti/http-kit';
import type { Revocation } from '../domain/ports.js';
import type { RevocationInput, Revocations } from '../oidc/revocations.js';
import { listRequest, listResult } from './list.js';
import { link } from './views.js';

/** `revocationDetail`: baseEntity, `expiresAt` and `type`. */
export function revocationDetail(r: Revocation) {
  return {
    _links: { self: link(`./revocations/${r.id}`) },
    createdAt: formatTimestamp(r.createdAt),
    expiresAt: formatTimestamp(r.expiresAt),
    id: r.id,
    tags: r.tags,
    type: r.type,
    updatedAt: formatTimestamp(r.updatedAt),
  };
}

/** Management `/revocations` (OIDC.md "Revocations"). */
export function revocationHandlers(revocations: Revocations): Record<string, Handler> {
  return {
    async listRevocations(ctx) {
      return listResult(await revocations.list(listRequest(ctx)), revocationDetail);
    },
    async detailRevocation(ctx) {
      return { body: dataEnvelope(revocationDetail(await revocations.detail(ctx.params.id!))) };
    },
    async createRevocation(ctx) {
      return { status: 201, body: createdEnvelope('revocations', await revocations.create(ctx.body as RevocationInput)) };
    },
  };
}
