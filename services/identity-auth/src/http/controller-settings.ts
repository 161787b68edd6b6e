import { formatTimestamp, createdEnvelope, dataEnvelope, emptyEnvelope } from '@ziti/errors';
import type { Handler } from '@ziti/http-kit';
import type { ControllerSetting, ControllerSettingInput, ControllerSettingsManager, OidcSettings } from '../domain/controller-settings.js';
import { listRequest, listResult } from './list.js';
import { link } from './views.js';

/** The wire `controllerSettings` of a setting's lists (only those set). */
const oidcOf = (o: OidcSettings) => ({
  ...(o.postLogoutUris !== undefined ? { postLogoutUris: o.postLogoutUris } : {}),
  ...(o.redirectUris !== undefined ? { redirectUris: o.redirectUris } : {}),
});

function base(s: ControllerSetting) {
  return {
    _links: { self: link(`./controller-settings/${s.id}`), effective: link(`./controller-settings/${s.id}/effective`) },
    createdAt: formatTimestamp(s.createdAt),
    id: s.id,
    tags: s.tags,
    updatedAt: formatTimestamp(s.updatedAt),
  };
}

/** `controllerSettingDetail`. */
export const controllerSettingDetail = (s: ControllerSetting) => ({ ...base(s), oidc: oidcOf(s.oidc) });

/** Management `/controller-settings*`. */
export function controllerSettingHandlers(settings: ControllerSettingsManager): Record<string, Handler> {
  return {
    async listControllerSettings(ctx) {
      return listResult(await settings.list(listRequest(ctx)), controllerSettingDetail);
    },
    async createControllerSetting(ctx) {
      return { status: 201, body: createdEnvelope('controller-settings', await settings.create(ctx.body as ControllerSettingInput)) };
    },
    async detailControllerSetting(ctx) {
      return { body: dataEnvelope(controllerSettingDetail(await settings.detail(ctx.params.id!))) };
    },
    async detailControllerSettingEffective(ctx) {
      const e = await settings.effective(ctx.params.id!);
      return { body: dataEnvelope({ ...base(e.setting), effective: { oidc: oidcOf(e.effective) }, instance: { oidc: oidcOf(e.instance) } }) };
    },
    async updateControllerSetting(ctx) {
      await settings.update(ctx.params.id!, ctx.body as ControllerSettingInput);
      return { body: emptyEnvelope() };
    },
    async patchControllerSetting(ctx) {
      await settings.patch(ctx.params.id!, ctx.body as ControllerSettingInput);
      return { body: emptyEnvelope() };
    },
    async deleteControllerSetting(ctx) {
      await settings.delete(ctx.params.id!);
      return { body: emptyEnvelope() };
    },
  };
}
