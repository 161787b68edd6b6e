import { ApiError, dataEnvelope } from '@ziti/errors';
import type { Handler } from '@ziti/http-kit';
import type { IdentityTypeRepository } from '../domain/ports.js';
import { listRequest, listResult } from './list.js';
import { identityTypeDetail } from './views.js';

/** Management `/identity-types` (read-only built-ins). */
export function identityTypeHandlers(types: IdentityTypeRepository): Record<string, Handler> {
  return {
    async listIdentityTypes(ctx) {
      return listResult(await types.list(listRequest(ctx)), identityTypeDetail);
    },
    async detailIdentityType(ctx) {
      const t = await types.findById(ctx.params.id!);
      if (!t) throw ApiError.notFound();
      return { body: dataEnvelope(identityTypeDetail(t)) };
    },
  };
}
