import { createdEnvelope, dataEnvelope, emptyEnvelope } from '@ziti/errors';
import type { Handler } from '@ziti/http-kit';
import type { SignerManager } from '../domain/ext-jwt/signer-manager.js';
import type { SignerInput } from '../domain/ext-jwt/signer-rules.js';
import { actorOf } from './access.js';
import { clientSignerDetail, signerDetail } from './auth-views.js';
import { listRequest, listResult } from './list.js';

/** `/external-jwt-signers`: management CRUD; the client API's anonymous list shows the enabled ones. */
export function signerHandlers(signers: SignerManager): Record<string, Handler> {
  return {
    async listExternalJwtSigners(ctx) {
      if (ctx.api === 'client') return listResult(await signers.list(listRequest(ctx), true), clientSignerDetail);
      return listResult(await signers.list(listRequest(ctx)), signerDetail);
    },
    async createExternalJwtSigner(ctx) {
      return { status: 201, body: createdEnvelope('external-jwt-signers', await signers.create(actorOf(ctx), ctx.body as SignerInput)) };
    },
    async detailExternalJwtSigner(ctx) {
      return { body: dataEnvelope(signerDetail(await signers.detail(ctx.params.id!))) };
    },
    async updateExternalJwtSigner(ctx) {
      await signers.update(actorOf(ctx), ctx.params.id!, ctx.body as SignerInput);
      return { body: emptyEnvelope() };
    },
    async patchExternalJwtSigner(ctx) {
      await signers.patch(actorOf(ctx), ctx.params.id!, ctx.body as SignerInput);
      return { body: emptyEnvelope() };
    },
    async deleteExternalJwtSigner(ctx) {
      await signers.delete(ctx.params.id!);
      return { body: emptyEnvelope() };
    },
  };
}
