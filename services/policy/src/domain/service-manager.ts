import { ApiError } from '@ziti/errors';
import { shortId } from '@ziti/http-kit';
import { referenced } from './config-manager.js';
import type { ListRequest, Page, Service, Tags, Terminator } from './model.js';
import type { ListScope, NewService, NewTerminator, Transaction, UnitOfWork } from './ports.js';
import { validateAttributes } from './roles.js';
import { requireName } from './names.js';

/** Terminator strategies (§6.13); an empty strategy means the default. */
export const TERMINATOR_STRATEGIES = ['smartrouting', 'weighted', 'random', 'sticky'];
export const DEFAULT_STRATEGY = 'smartrouting';
export const PRECEDENCES = ['default', 'required', 'failed'];

export interface ServiceInput {
  name?: string | null;
  configs?: string[] | null;
  encryptionRequired?: boolean | null;
  maxIdleTimeMillis?: number | null;
  roleAttributes?: string[] | null;
  tags?: Tags | null;
  terminatorStrategy?: string | null;
}

export interface TerminatorInput {
  service?: string;
  router?: string;
  binding?: string;
  address?: string;
  identity?: string;
  /** `identitySecret` (base64) of a create: the instance secret, stored and never rendered. */
  identitySecret?: string;
  cost?: number;
  precedence?: string;
  tags?: Tags | null;
}

const has = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/** Services (management) and terminators. */
export class ServiceManager {
  constructor(private readonly uow: UnitOfWork) {}

  list(req: ListRequest, scope?: ListScope): Promise<Page<Service>> {
    return this.uow.repos.services.list(req, scope);
  }

  async service(id: string): Promise<Service> {
    const s = await this.uow.repos.services.find(id);
    if (!s) throw ApiError.notFound();
    return s;
  }

  async create(input: ServiceInput): Promise<string> {
    const id = shortId();
    await this.uow.run(async (tx) => {
      const s = await fields(tx, id, input, null);
      await tx.services.create(s);
      const { affectedIdentities } = await tx.evaluator.entity('service', id, s.roleAttributes);
      tx.emit({ type: 'service-access.changed', identityIds: affectedIdentities, cause: 'service' });
    });
    return id;
  }

  /** PUT replaces every updatable field; PATCH the given ones. `encryptionRequired` is fixed at create. */
  async update(id: string, input: ServiceInput, patch: boolean): Promise<void> {
    await this.uow.run(async (tx) => {
      const current = await tx.services.findForUpdate(id);
      if (!current) throw ApiError.notFound();
      const merged: ServiceInput = patch
        ? {
            name: has(input, 'name') ? input.name : current.name,
            configs: has(input, 'configs') ? input.configs : current.configs,
            maxIdleTimeMillis: has(input, 'maxIdleTimeMillis') ? input.maxIdleTimeMillis : current.maxIdleTimeMillis,
            roleAttributes: has(input, 'roleAttributes') ? input.roleAttributes : current.roleAttributes,
            tags: has(input, 'tags') ? input.tags : current.tags,
            terminatorStrategy: has(input, 'terminatorStrategy') ? input.terminatorStrategy : current.terminatorStrategy,
          }
        : input;
      const s = await fields(tx, id, merged, current);
      await tx.services.update(s);
      const affected = new Set(await tx.services.identitiesWithAccess(id));
      if (!sameSet(s.roleAttributes, current.roleAttributes)) {
        (await tx.evaluator.entity('service', id, s.roleAttributes)).affectedIdentities.forEach((x) => affected.add(x));
      }
      tx.emit({ type: 'service-access.changed', identityIds: [...affected], cause: 'service' });
    });
  }

  async delete(id: string): Promise<void> {
    await this.uow.run(async (tx) => {
      if (!(await tx.services.findForUpdate(id))) throw ApiError.notFound();
      const affected = await tx.services.identitiesWithAccess(id);
      await tx.evaluator.detach('service', id);
      await tx.evaluator.removeReferences('service', id);
      await tx.services.delete(id);
      tx.emit({ type: 'service-access.changed', identityIds: affected, cause: 'service' });
    });
  }

  // ---------------------------------------------------------------- terminators

  listTerminators(req: ListRequest, scope?: ListScope): Promise<Page<Terminator>> {
    return this.uow.repos.terminators.list(req, scope);
  }

  async terminator(id: string): Promise<Terminator> {
    const t = await this.uow.repos.terminators.find(id);
    if (!t) throw ApiError.notFound();
    return t;
  }

  async saveTerminator(id: string | null, input: TerminatorInput, patch: boolean): Promise<string> {
    const tid = id ?? shortId();
    await this.uow.run(async (tx) => {
      const current = id ? await tx.terminators.find(id) : null;
      if (id && !current) throw ApiError.notFound();
      const pick = <K extends keyof TerminatorInput>(k: K, fallback: TerminatorInput[K]) => (patch && !has(input, k) ? fallback : input[k]);
      const t: NewTerminator = {
        id: tid,
        serviceId: String(pick('service', current?.serviceId) ?? ''),
        routerId: String(pick('router', current?.routerId) ?? ''),
        binding: String(pick('binding', current?.binding) ?? ''),
        address: String(pick('address', current?.address) ?? ''),
        identity: String((current && !has(input, 'identity') ? current.identity : input.identity) ?? ''),
        cost: Number(pick('cost', current?.cost) ?? 0),
        precedence: String(pick('precedence', current?.precedence) ?? 'default') || 'default',
        tags: (pick('tags', current?.tags) ?? {}) as Tags,
        hostId: current?.hostId ?? '',
        peerData: current?.peerData ?? {},
        isSystem: current?.isSystem ?? false,
        savedPrecedence: current?.savedPrecedence ?? null,
        instanceSecret: !current && input.identitySecret ? input.identitySecret : null,
      };
      if (!t.serviceId || !(await tx.services.find(t.serviceId))) throw ApiError.field('service', 'no service found with the given id', t.serviceId);
      if (!t.routerId || !(await tx.routers.find(t.routerId))) throw ApiError.field('router', 'no router found with the given id', t.routerId);
      if (!t.binding) throw ApiError.field('binding', 'binding is required', t.binding);
      if (!t.address) throw ApiError.field('address', 'address is required', t.address);
      if (!Number.isInteger(t.cost) || t.cost < 0 || t.cost > 65535) throw ApiError.field('cost', 'cost should be between 0 and 65535', t.cost);
      if (!PRECEDENCES.includes(t.precedence)) throw ApiError.field('precedence', `precedence in body should be one of [${PRECEDENCES.join(' ')}]`, t.precedence);
      await tx.terminators.save(t, !current);
    });
    return tid;
  }

  async deleteTerminator(id: string): Promise<void> {
    await this.uow.run(async (tx) => {
      if (!(await tx.terminators.find(id))) throw ApiError.notFound();
      await tx.terminators.delete(id);
    });
  }
}

async function fields(tx: Transaction, id: string, input: ServiceInput, current: Service | null): Promise<NewService> {
  const name = requireName(input.name);
  const strategy = input.terminatorStrategy || DEFAULT_STRATEGY;
  if (!TERMINATOR_STRATEGIES.includes(strategy)) throw ApiError.field('terminatorStrategy', `invalid terminator strategy: ${strategy}`, strategy);
  const maxIdle = input.maxIdleTimeMillis ?? 0;
  if (!Number.isInteger(maxIdle) || maxIdle < 0) throw ApiError.field('maxIdleTimeMillis', 'maxIdleTimeMillis must be a positive integer', maxIdle);
  const configIds = [...new Set(input.configs ?? [])];
  const found = await tx.configs.findMany(configIds);
  const missing = configIds.filter((c) => !found.some((f) => f.id === c));
  if (missing.length > 0) throw ApiError.field('configs', 'no configs found with the given ids', missing);
  const types = await tx.configTypes.findMany([...new Set(found.map((c) => c.configTypeId))]);
  const seen = new Map<string, string>();
  const configs: { id: string; typeId: string }[] = [];
  for (const cid of configIds) {
    const c = found.find((f) => f.id === cid)!;
    const t = types.find((x) => x.id === c.configTypeId);
    if (t && t.target !== null && t.target !== 'service') {
      throw ApiError.field('configs', `config ${cid} of type ${t.name} does not target services`, cid);
    }
    if (seen.has(c.configTypeId)) {
      throw ApiError.field('configs', `duplicate configs ${seen.get(c.configTypeId)} and ${cid} of type ${c.configTypeName}`, configIds);
    }
    seen.set(c.configTypeId, cid);
    configs.push({ id: cid, typeId: c.configTypeId });
  }
  return {
    id,
    name,
    roleAttributes: validateAttributes(input.roleAttributes),
    encryptionRequired: current ? current.encryptionRequired : !!input.encryptionRequired,
    maxIdleTimeMillis: maxIdle,
    terminatorStrategy: strategy,
    tags: input.tags ?? {},
    configs,
  };
}

export function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

export { referenced };
