import { createdEnvelope, dataEnvelope, emptyEnvelope } from '@ziti/errors';
import { type Handler, isAdminCaller } from '@ziti/http-kit';
import { type CaFields, type CaManager, type ClaimInput, claimFrom } from '../domain/cas.js';
import { listRequest, listResult, textBody } from './common.js';
import { caDetail } from './views.js';

interface CaBody {
  name?: string | null;
  certPem?: string;
  isAuthEnabled?: boolean | null;
  isAutoCaEnrollmentEnabled?: boolean | null;
  isOttCaEnrollmentEnabled?: boolean | null;
  identityRoles?: string[] | null;
  identityNameFormat?: string | null;
  externalIdClaim?: ClaimInput;
  tags?: Record<string, unknown> | null;
}

function fullFields(b: CaBody): CaFields {
  return {
    name: b.name ?? '',
    isAuthEnabled: !!b.isAuthEnabled,
    isAutoCaEnrollmentEnabled: !!b.isAutoCaEnrollmentEnabled,
    isOttCaEnrollmentEnabled: !!b.isOttCaEnrollmentEnabled,
    identityRoles: b.identityRoles ?? [],
    identityNameFormat: b.identityNameFormat ?? '',
    externalIdClaim: claimFrom(b.externalIdClaim),
    tags: b.tags ?? {},
  };
}

/** Management `/cas`: CRUD, verify, and the CA's enrollment JWT. */
export function caHandlers(cas: CaManager): Record<string, Handler> {
  return {
    async listCas(ctx) {
      return listResult(await cas.list(listRequest(ctx)), caDetail);
    },
    async createCa(ctx) {
      const b = ctx.body as CaBody;
      const id = await cas.create(b.certPem ?? '', fullFields(b), isAdminCaller(ctx.principal));
      return { status: 201, body: createdEnvelope('cas', id) };
    },
    async detailCa(ctx) {
      return { body: dataEnvelope(caDetail(await cas.detail(ctx.params.id!))) };
    },
    async updateCa(ctx) {
      const b = ctx.body as CaBody;
      await cas.update(ctx.params.id!, fullFields(b), isAdminCaller(ctx.principal));
      return { body: emptyEnvelope() };
    },
    async patchCa(ctx) {
      const b = ctx.body as CaBody;
      const current = await cas.detail(ctx.params.id!);
      const fields: Partial<CaFields> = {};
      if (b.name !== undefined && b.name !== null) fields.name = b.name;
      if (b.isAuthEnabled !== undefined && b.isAuthEnabled !== null) fields.isAuthEnabled = b.isAuthEnabled;
      if (b.isAutoCaEnrollmentEnabled !== undefined && b.isAutoCaEnrollmentEnabled !== null) fields.isAutoCaEnrollmentEnabled = b.isAutoCaEnrollmentEnabled;
      if (b.isOttCaEnrollmentEnabled !== undefined && b.isOttCaEnrollmentEnabled !== null) fields.isOttCaEnrollmentEnabled = b.isOttCaEnrollmentEnabled;
      if (b.identityRoles !== undefined) fields.identityRoles = b.identityRoles ?? [];
      if (b.identityNameFormat !== undefined && b.identityNameFormat !== null) fields.identityNameFormat = b.identityNameFormat;
      if (b.externalIdClaim !== undefined) fields.externalIdClaim = b.externalIdClaim === null ? null : claimFrom(b.externalIdClaim, current.externalIdClaim);
      if (b.tags !== undefined) fields.tags = b.tags ?? {};
      await cas.update(ctx.params.id!, fields, isAdminCaller(ctx.principal));
      return { body: emptyEnvelope() };
    },
    async deleteCa(ctx) {
      await cas.delete(ctx.params.id!);
      return { body: emptyEnvelope() };
    },
    async verifyCa(ctx) {
      await cas.verify(ctx.params.id!, await textBody(ctx));
      return { body: emptyEnvelope() };
    },
    async getCaJwt(ctx) {
      return { raw: Buffer.from(await cas.jwt(ctx.params.id!)), contentType: 'application/jwt' };
    },
  };
}
