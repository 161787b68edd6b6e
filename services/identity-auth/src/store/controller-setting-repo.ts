import { ApiError } from '@ziti/errors';
import type { Pool } from 'pg';
import type { ControllerSetting, ControllerSettingFields, ControllerSettingRepository, OidcSettings } from '../domain/controller-settings.js';
import type { ListRequest, Page } from '../domain/model.js';
import type { Prisma } from '../generated/prisma/client.js';
import { type Db, json, mapped } from './db.js';
import { inIdOrder, listIds } from './list-query.js';
import { CONTROLLER_SETTING_QUERY } from './query-schemas.js';

type Row = Prisma.ControllerSettingGetPayload<object>;

const strings = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);

function toSetting(r: Row): ControllerSetting {
  const stored = json(r.oidc);
  const oidc: OidcSettings = {};
  const redirectUris = strings(stored.redirectUris);
  const postLogoutUris = strings(stored.postLogoutUris);
  if (redirectUris) oidc.redirectUris = redirectUris;
  if (postLogoutUris) oidc.postLogoutUris = postLogoutUris;
  return { id: r.id, oidc, tags: json(r.tags), createdAt: r.createdAt, updatedAt: r.updatedAt };
}

const data = (f: ControllerSettingFields) => ({ oidc: f.oidc as Prisma.InputJsonObject, tags: f.tags as Prisma.InputJsonObject });

export class PrismaControllerSettingRepository implements ControllerSettingRepository {
  constructor(
    private readonly db: Db,
    private readonly pool: Pool,
  ) {}

  async findById(id: string): Promise<ControllerSetting | null> {
    const r = await this.db.controllerSetting.findUnique({ where: { id } });
    return r ? toSetting(r) : null;
  }

  async list(req: ListRequest): Promise<Page<ControllerSetting>> {
    const page = await listIds(this.pool, CONTROLLER_SETTING_QUERY, req);
    const rows = page.ids.length > 0 ? await this.db.controllerSetting.findMany({ where: { id: { in: page.ids } } }) : [];
    return { ...page, items: inIdOrder(page.ids, rows).map(toSetting) };
  }

  /** The primary key is the controller's id: a second setting for it is `controllerId must be unique`. */
  async create(id: string, fields: ControllerSettingFields): Promise<void> {
    await mapped(() => this.db.controllerSetting.create({ data: { id, ...data(fields) } }), undefined, {
      controller_settings_pkey: () => ApiError.field('controllerId', 'controllerId must be unique', id),
    });
  }

  async update(id: string, fields: ControllerSettingFields): Promise<ControllerSetting | null> {
    const { count } = await this.db.controllerSetting.updateMany({ where: { id }, data: { ...data(fields), updatedAt: new Date() } });
    return count === 0 ? null : this.findById(id);
  }

  async delete(id: string): Promise<boolean> {
    const { count } = await this.db.controllerSetting.deleteMany({ where: { id } });
    return count > 0;
  }
}
