import { ApiError } from '@ziti/errors';
import { shortId } from '@ziti/http-kit';
import { BUILTIN_CONFIG_TYPES } from './builtin-config-types.js';
import { compileSchema, validateData } from './json-schema.js';
import type { Config, ConfigTarget, ConfigType, ListRequest, Page, Tags } from './model.js';
import type { ListScope, Transaction, UnitOfWork } from './ports.js';
import { requireName } from './names.js';

export interface ConfigTypeInput {
  name?: string;
  schema?: Record<string, unknown> | null;
  target?: string | null;
  tags?: Tags | null;
}

export interface ConfigInput {
  name?: string;
  configTypeId?: string;
  data?: Record<string, unknown> | null;
  tags?: Tags | null;
}

const TARGETS = ['service', 'router'];

/** Config types and configs: CRUD with schema validation (§6.10). */
export class ConfigManager {
  constructor(private readonly uow: UnitOfWork) {}

  /** Creates the built-in config types that are missing (idempotent, any replica). */
  ensureBuiltins(): Promise<void> {
    return this.uow.run((tx) => tx.configTypes.ensure(BUILTIN_CONFIG_TYPES));
  }

  listTypes(req: ListRequest): Promise<Page<ConfigType>> {
    return this.uow.repos.configTypes.list(req);
  }

  async type(id: string): Promise<ConfigType> {
    const t = await this.uow.repos.configTypes.find(id);
    if (!t) throw ApiError.notFound();
    return t;
  }

  async createType(input: ConfigTypeInput): Promise<string> {
    const t = typeFields(input, null);
    const id = shortId();
    await this.uow.run((tx) => tx.configTypes.create({ id, ...t }));
    return id;
  }

  /** PUT (`patch` false) replaces name, schema and tags; the target is kept. PATCH changes the given fields. */
  async updateType(id: string, input: ConfigTypeInput, patch: boolean): Promise<void> {
    await this.uow.run(async (tx) => {
      const current = await tx.configTypes.find(id);
      if (!current) throw ApiError.notFound();
      const merged: ConfigTypeInput = patch
        ? { name: input.name ?? current.name, schema: 'schema' in input ? input.schema : current.schema, tags: 'tags' in input ? input.tags : current.tags }
        : input;
      await tx.configTypes.update(id, { ...typeFields({ ...merged, target: current.target }, current), target: current.target });
    });
  }

  async deleteType(id: string): Promise<void> {
    await this.uow.run(async (tx) => {
      if (!(await tx.configTypes.find(id))) throw ApiError.notFound();
      const configs = await tx.configTypes.configIds(id);
      if (configs.length > 0) throw referenced('configs', configs, 'configTypes', 'configs');
      await tx.configTypes.delete(id);
    });
  }

  list(req: ListRequest, scope?: ListScope): Promise<Page<Config>> {
    return this.uow.repos.configs.list(req, scope);
  }

  async config(id: string): Promise<Config> {
    const c = await this.uow.repos.configs.find(id);
    if (!c) throw ApiError.notFound();
    return c;
  }

  async create(input: ConfigInput): Promise<string> {
    const name = requireName(input.name);
    const typeId = input.configTypeId ?? '';
    if (!typeId) throw ApiError.field('configTypeId', 'configTypeId is required', typeId);
    if (input.data === undefined || input.data === null) throw ApiError.field('data', 'data is required', null);
    const id = shortId();
    await this.uow.run(async (tx) => {
      const type = await tx.configTypes.find(typeId);
      if (!type) throw ApiError.field('configTypeId', 'no config type found with the given id', typeId);
      validateData(compileSchema(type.schema, `${type.id}@${type.updatedAt.toISOString()}`), input.data);
      await tx.configs.create({ id, name, configTypeId: typeId, data: input.data!, tags: input.tags ?? {} });
    });
    return id;
  }

  /** The config type can not change; PUT needs name and data, PATCH changes the given fields. */
  async update(id: string, input: ConfigInput, patch: boolean): Promise<void> {
    await this.uow.run(async (tx) => {
      const current = await tx.configs.find(id);
      if (!current) throw ApiError.notFound();
      if (input.configTypeId !== undefined && input.configTypeId !== current.configTypeId) {
        throw ApiError.field('configTypeId', 'config type can not be changed', input.configTypeId);
      }
      const name = requireName(patch ? (input.name ?? current.name) : input.name);
      const data = patch ? ('data' in input ? input.data : current.data) : input.data;
      if (data === undefined || data === null) throw ApiError.field('data', 'data is required', null);
      const tags = patch && !('tags' in input) ? current.tags : (input.tags ?? {});
      if ('data' in input || !patch) {
        const type = await tx.configTypes.find(current.configTypeId);
        if (type) validateData(compileSchema(type.schema, `${type.id}@${type.updatedAt.toISOString()}`), data);
      }
      await tx.configs.update(id, { name, data, tags });
      await changedConfig(tx, id);
    });
  }

  async delete(id: string): Promise<void> {
    await this.uow.run(async (tx) => {
      if (!(await tx.configs.find(id))) throw ApiError.notFound();
      const { overrideIdentityIds } = await tx.configs.users(id);
      if (overrideIdentityIds.length > 0) throw referenced('identityServices', overrideIdentityIds, 'configs', 'identities');
      await changedConfig(tx, id);
      await tx.configs.delete(id);
    });
  }
}

/** Identities that see a config through a service they reach. */
async function changedConfig(tx: Transaction, configId: string): Promise<void> {
  const { serviceIds } = await tx.configs.users(configId);
  for (const s of serviceIds) {
    const ids = await tx.services.identitiesWithAccess(s);
    if (ids.length > 0) tx.emit({ type: 'service-access.changed', identityIds: ids, cause: 'config' });
  }
}

function typeFields(input: ConfigTypeInput, current: ConfigType | null): { name: string; schema: Record<string, unknown>; target: ConfigTarget; tags: Tags } {
  const name = requireName(input.name);
  const schema = input.schema ?? {};
  compileSchema(schema);
  let target: ConfigTarget = current ? current.target : 'service';
  if (!current && input.target !== undefined && input.target !== null) {
    if (!TARGETS.includes(input.target)) throw ApiError.field('target', `target in body should be one of [${TARGETS.join(' ')}]`, input.target);
    target = input.target as ConfigTarget;
  }
  return { name, schema, target, tags: input.tags ?? {} };
}

/** 409 CAN_NOT_DELETE_REFERENCED_ENTITY, shaped as boltz's ReferenceExistsError. */
export function referenced(field: string, ids: readonly string[], type: string, by: string): ApiError {
  return ApiError.of('CAN_NOT_DELETE_REFERENCED_ENTITY', {
    cause: { field, value: `[${ids.join(' ')}]`, reason: `entity type ${type} referenced by ${by}: [${ids.join(' ')}]` },
  });
}
