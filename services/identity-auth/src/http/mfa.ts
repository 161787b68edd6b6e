import { dataEnvelope, emptyEnvelope } from '@ziti/errors';
import type { Handler } from '@ziti/http-kit';
import QRCode from 'qrcode';
import type { MfaManager } from '../domain/mfa/mfa-manager.js';
import { provisioningUrl } from '../domain/mfa/totp.js';
import { mfaCodeOf, principalOf } from './access.js';
import { mfaDetail, mfaRecoveryCodesDetail } from './auth-views.js';
import { link } from './views.js';

/** `/current-identity/mfa*` (both APIs). `issuer` is the TOTP issuer (`edge.totp.hostname`). */
export function mfaHandlers(mfa: MfaManager, issuer: string): Record<string, Handler> {
  return {
    async enrollMfa(ctx) {
      const id = await mfa.enroll(principalOf(ctx).identityId);
      return { status: 201, body: dataEnvelope({ _links: { self: link('./current-identity/mfa') }, id }) };
    },
    async detailMfa(ctx) {
      const p = principalOf(ctx);
      return { body: dataEnvelope(mfaDetail(await mfa.detail(p.identityId), p.identityName, issuer)) };
    },
    async detailMfaQrCode(ctx) {
      const p = principalOf(ctx);
      const m = await mfa.unverified(p.identityId);
      const png = await QRCode.toBuffer(provisioningUrl(m.secret, p.identityName, issuer), { type: 'png', width: 256, margin: 1, errorCorrectionLevel: 'M' });
      return { raw: png, contentType: 'image/png' };
    },
    async verifyMfa(ctx) {
      const p = principalOf(ctx);
      await mfa.verify(p.identityId, p.apiSessionId, (ctx.body as { code: string }).code);
      return { body: emptyEnvelope() };
    },
    async detailMfaRecoveryCodes(ctx) {
      const p = principalOf(ctx);
      const m = await mfa.recoveryCodes(p.identityId, p.apiSessionId, mfaCodeOf(ctx));
      return { body: dataEnvelope(mfaRecoveryCodesDetail(m)) };
    },
    async createMfaRecoveryCodes(ctx) {
      const p = principalOf(ctx);
      await mfa.regenerateRecoveryCodes(p.identityId, p.apiSessionId, (ctx.body as { code: string }).code);
      return { body: emptyEnvelope() };
    },
    async deleteMfa(ctx) {
      const p = principalOf(ctx);
      await mfa.removeOwn(p.identityId, p.apiSessionId, mfaCodeOf(ctx));
      return { body: emptyEnvelope() };
    },
  };
}
