import { createdEnvelope, dataEnvelope, emptyEnvelope } from '@ziti/errors';
import type { Handler } from '@ziti/http-kit';
import type { AccessManager } from '../domain/access-manager.js';
import type { ConfigManager } from '../domain/config-manager.js';
import type { ServiceManager } from '../domain/service-manager.js';
import { id, listRequest, listResult, viewer } from './list.js';
import { configDetail, configTypeDetail, serviceDetail } from './views.js';

/** Management `/config-types` and `/configs`. */
export function configHandlers(configs: ConfigManager, services: ServiceManager, access: AccessManager): Record<string, Handler> {
  return {
    async listConfigTypes(ctx) {
      return listResult(await configs.listTypes(listRequest(ctx)), configTypeDetail);
    },
    async createConfigType(ctx) {
      return { status: 201, body: createdEnvelope('config-types', await configs.createType(ctx.body)) };
    },
    async detailConfigType(ctx) {
      return { body: dataEnvelope(configTypeDetail(await configs.type(id(ctx)))) };
    },
    async updateConfigType(ctx) {
      await configs.updateType(id(ctx), ctx.body, false);
      return { body: emptyEnvelope() };
    },
    async patchConfigType(ctx) {
      await configs.updateType(id(ctx), ctx.body, true);
      return { body: emptyEnvelope() };
    },
    async deleteConfigType(ctx) {
      await configs.deleteType(id(ctx));
      return { body: emptyEnvelope() };
    },
    async listConfigsForConfigType(ctx) {
      await configs.type(id(ctx));
      return listResult(await configs.list({ ...listRequest(ctx), limit: '-1' }, { of: 'linked', link: 'config-type-configs', ownerId: id(ctx) }), configDetail);
    },

    async listConfigs(ctx) {
      return listResult(await configs.list(listRequest(ctx)), configDetail);
    },
    async createConfig(ctx) {
      return { status: 201, body: createdEnvelope('configs', await configs.create(ctx.body)) };
    },
    async detailConfig(ctx) {
      return { body: dataEnvelope(configDetail(await configs.config(id(ctx)))) };
    },
    async updateConfig(ctx) {
      await configs.update(id(ctx), ctx.body, false);
      return { body: emptyEnvelope() };
    },
    async patchConfig(ctx) {
      await configs.update(id(ctx), ctx.body, true);
      return { body: emptyEnvelope() };
    },
    async deleteConfig(ctx) {
      await configs.delete(id(ctx));
      return { body: emptyEnvelope() };
    },
    async listConfigServices(ctx) {
      await configs.config(id(ctx));
      const page = await services.list(listRequest(ctx), { of: 'linked', link: 'config-services', ownerId: id(ctx) });
      return listResult({ ...page, items: await access.managementViews(viewer(ctx), page.items) }, serviceDetail);
    },
  };
}
