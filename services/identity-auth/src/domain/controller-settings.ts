import { ApiError } from '@ziti/errors';
import type { JsonMap, ListRequest, Page } from './model.js';
import type { Transaction, UnitOfWork } from './ports.js';

/**
 * Controller settings (management `/controller-settings*`). OpenZiti's swagger has the seven
 * operations but its controller no handler, so the model is this context's own:
 *
 * - `global` (always present, cannot be deleted) holds the base values every controller starts
 *   from; it is seeded with the redirect and post-logout URIs OpenZiti's OIDC endpoint allows when
 *   none are configured.
 * - A controller-specific setting overrides them for one controller; its id is that controller's
 *   id (one per controller). Each list it sets replaces the global one; a list it leaves out
 *   inherits it.
 * - The effective view of a setting is the global settings with the override applied
 *   (`effective`) and the setting's own values (`instance`).
 *
 * Every change stores a `controller-settings.updated` event in the outbox, for an OIDC provider
 * to react to.
 */

export const GLOBAL_SETTING_ID = 'global';

/** The lists a setting sets (absent = not set: inherited from `global` in an override). */
export interface OidcSettings {
  redirectUris?: string[];
  postLogoutUris?: string[];
}

export interface ControllerSetting {
  id: string;
  oidc: OidcSettings;
  tags: JsonMap;
  createdAt: Date;
  updatedAt: Date;
}

export interface ControllerSettingFields {
  oidc: OidcSettings;
  tags: JsonMap;
}

export interface EffectiveSetting {
  setting: ControllerSetting;
  effective: OidcSettings;
  instance: OidcSettings;
}

/** Create, update and patch bodies, once schema-validated. */
export interface ControllerSettingInput {
  controllerId?: string;
  oidc?: OidcSettings;
  tags?: JsonMap | null;
}

export interface ControllerSettingRepository {
  findById(id: string): Promise<ControllerSetting | null>;
  list(req: ListRequest): Promise<Page<ControllerSetting>>;
  /** A setting of this id exists already: 400 `controllerId` must be unique. */
  create(id: string, fields: ControllerSettingFields): Promise<void>;
  update(id: string, fields: ControllerSettingFields): Promise<ControllerSetting | null>;
  delete(id: string): Promise<boolean>;
}

const OIDC_FIELDS = ['redirectUris', 'postLogoutUris'] as const;

/** A port of `*` (a pattern OpenZiti's OIDC endpoint allows, e.g. `http://127.0.0.1:*\/auth/callback`). */
const WILDCARD_PORT = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*:)\*(?=[/?#]|$)/;

/**
 * An absolute URI (RFC 3986 `scheme ":" hier-part`): a scheme, no whitespace or control
 * characters, and a form the WHATWG URL parser accepts; a `*` port is allowed as a pattern.
 */
export function isAbsoluteUri(value: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(value) || /[\u0000-\u001f\u007f]/.test(value)) return false;
  try {
    const url = new URL(value.replace(WILDCARD_PORT, '$1' + '1'));
    if ((url.protocol === 'http:' || url.protocol === 'https:') && url.hostname === '') return false;
    return true;
  } catch {
    return false;
  }
}

/** Each URI of the lists given must be absolute: else 400 COULD_NOT_VALIDATE on `oidc.<list>`. */
export function validateOidc(oidc: OidcSettings): void {
  for (const field of OIDC_FIELDS) {
    const list = oidc[field];
    if (list === undefined) continue;
    list.forEach((uri, i) => {
      if (!isAbsoluteUri(uri)) throw ApiError.field(`oidc.${field}`, `oidc.${field}[${i}] must be an absolute URI`, uri);
    });
  }
}

/** The set lists of `oidc`, each once (order kept). */
function setLists(oidc: OidcSettings | undefined): OidcSettings {
  const out: OidcSettings = {};
  for (const field of OIDC_FIELDS) {
    const list = oidc?.[field];
    if (list !== undefined) out[field] = [...new Set(list)];
  }
  return out;
}

/** The global settings with the override's set lists applied. */
export function effectiveOidc(global: OidcSettings, override: OidcSettings): OidcSettings {
  const out: OidcSettings = {};
  for (const field of OIDC_FIELDS) out[field] = [...(override[field] ?? global[field] ?? [])];
  return out;
}

/** The global setting has every list (an absent one is empty). */
function complete(oidc: OidcSettings): OidcSettings {
  return effectiveOidc({}, oidc);
}

/** Controller settings: the global base, per-controller overrides and their effective view. */
export class ControllerSettingsManager {
  /** `controllers`: the ids of the known controllers (those `GET /controllers` lists). */
  constructor(
    private readonly uow: UnitOfWork,
    private readonly controllers: () => readonly string[],
  ) {}

  list(req: ListRequest): Promise<Page<ControllerSetting>> {
    return this.uow.repos.controllerSettings.list(req);
  }

  async detail(id: string): Promise<ControllerSetting> {
    const s = await this.uow.repos.controllerSettings.findById(id);
    if (!s) throw ApiError.notFound();
    return s;
  }

  async effective(id: string): Promise<EffectiveSetting> {
    const repo = this.uow.repos.controllerSettings;
    const [setting, global] = await Promise.all([repo.findById(id), id === GLOBAL_SETTING_ID ? null : repo.findById(GLOBAL_SETTING_ID)]);
    if (!setting) throw ApiError.notFound();
    const base = id === GLOBAL_SETTING_ID ? setting.oidc : (global?.oidc ?? {});
    return { setting, effective: effectiveOidc(base, setting.oidc), instance: setting.oidc };
  }

  /** One setting per known controller; `controllerId` is its id. */
  async create(input: ControllerSettingInput): Promise<string> {
    const controllerId = input.controllerId ?? '';
    if (controllerId === GLOBAL_SETTING_ID || !this.controllers().includes(controllerId)) {
      throw ApiError.field('controllerId', `no controller found with the given id`, controllerId);
    }
    const fields: ControllerSettingFields = { oidc: setLists(input.oidc), tags: input.tags ?? {} };
    validateOidc(fields.oidc);
    await this.uow.run(async (tx) => {
      await tx.controllerSettings.create(controllerId, fields);
      await emitChange(tx, controllerId, 'created', fields);
    });
    return controllerId;
  }

  /** PUT: every field as given; a list left out is empty in `global` and inherited in an override. */
  update(id: string, input: ControllerSettingInput): Promise<void> {
    return this.change(id, () => {
      const oidc = setLists(input.oidc);
      return { oidc: id === GLOBAL_SETTING_ID ? complete(oidc) : oidc, tags: input.tags ?? {} };
    });
  }

  /** PATCH: the lists and tags given replace the stored ones; the rest stays. */
  patch(id: string, input: ControllerSettingInput): Promise<void> {
    return this.change(id, (current) => ({
      oidc: { ...current.oidc, ...setLists(input.oidc) },
      tags: input.tags === undefined ? current.tags : (input.tags ?? {}),
    }));
  }

  /** The global settings cannot be deleted (409, as the system auth policy). */
  async delete(id: string): Promise<void> {
    if (id === GLOBAL_SETTING_ID) {
      throw ApiError.of('CAN_NOT_DELETE_REFERENCED_ENTITY', {
        cause: { field: 'id', value: `[${id}]`, reason: `entity type controllerSettings referenced by system: [${id}]` },
      });
    }
    await this.uow.run(async (tx) => {
      if (!(await tx.controllerSettings.delete(id))) throw ApiError.notFound();
      await emitChange(tx, id, 'deleted', null);
    });
  }

  private async change(id: string, next: (current: ControllerSetting) => ControllerSettingFields): Promise<void> {
    await this.uow.run(async (tx) => {
      await tx.lock(`controller-setting:${id}`);
      const current = await tx.controllerSettings.findById(id);
      if (!current) throw ApiError.notFound();
      const fields = next(current);
      validateOidc(fields.oidc);
      if (!(await tx.controllerSettings.update(id, fields))) throw ApiError.notFound();
      await emitChange(tx, id, 'updated', fields);
    });
  }
}

function emitChange(tx: Transaction, id: string, change: 'created' | 'updated' | 'deleted', fields: ControllerSettingFields | null): Promise<void> {
  return tx.emit({ type: 'controller-settings.updated', settingId: id, change, oidc: fields?.oidc ?? null });
}
