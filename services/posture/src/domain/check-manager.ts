import { ApiError } from '@ziti/errors';
import { shortId } from '@ziti/http-kit';
import { type Body, fieldsFor, patchFields } from './check-rules.js';
import type { ListRequest, Page, PostureCheck, PostureCheckTypeRecord, RoleFilter } from './model.js';
import type { PolicyPort, PostureCheckStore } from './ports.js';
import { eventData, postureCheckDetail } from './views.js';

/**
 * Posture checks: CRUD with validation, role attributes and their usage. Each committed write
 * carries its `posture-check.*` outbox event and is then pushed to the policy context
 * synchronously (SyncPostureCheck), so the very next session create or service list sees it; when
 * that call fails, the event makes the policy context converge.
 */
export class PostureCheckManager {
  constructor(
    private readonly store: PostureCheckStore,
    private readonly policy: PolicyPort,
    private readonly log: (m: string) => void,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async list(req: ListRequest, roleFilter?: RoleFilter): Promise<Page<PostureCheck>> {
    return this.store.list(req, roleFilter);
  }

  async detail(id: string): Promise<PostureCheck> {
    const check = await this.store.findById(id);
    if (!check) throw ApiError.notFound();
    return check;
  }

  async create(body: Body): Promise<string> {
    const fields = fieldsFor('Create', body);
    const at = this.now();
    const check: PostureCheck = { id: shortId(), ...fields, version: 1, createdAt: at, updatedAt: at };
    await this.store.create(check, [{ type: 'posture-check.created', data: eventData(check) }]);
    await this.sync(check, check.id);
    return check.id;
  }

  async update(id: string, body: Body): Promise<void> {
    const existing = await this.detail(id);
    await this.save(existing, fieldsFor('Update', body, existing));
  }

  async patch(id: string, body: Body): Promise<void> {
    const existing = await this.detail(id);
    await this.save(existing, patchFields(body, existing));
  }

  async delete(id: string): Promise<void> {
    const deleted = await this.store.delete(id, (c) => [{ type: 'posture-check.deleted', data: eventData(c, true) }]);
    if (!deleted) throw ApiError.notFound();
    await this.sync(null, id);
  }

  private async save(existing: PostureCheck, fields: Omit<PostureCheck, 'id' | 'version' | 'createdAt' | 'updatedAt'>): Promise<void> {
    const check: PostureCheck = { ...existing, ...fields, version: existing.version + 1, updatedAt: this.now() };
    await this.store.update(check, [{ type: 'posture-check.updated', data: eventData(check) }]);
    await this.sync(check, check.id);
  }

  private async sync(check: PostureCheck | null, id: string): Promise<void> {
    try {
      await this.policy.syncPostureCheck(check, id, check ? postureCheckDetail(check) : undefined);
    } catch (err) {
      this.log(`posture: SyncPostureCheck(${id}) failed, the posture-check event will converge it: ${(err as Error).message}`);
    }
  }

  async types(req: ListRequest): Promise<Page<PostureCheckTypeRecord>> {
    return this.store.listTypes(req);
  }

  async type(id: string): Promise<PostureCheckTypeRecord> {
    const t = await this.store.findType(id);
    if (!t) throw ApiError.notFound();
    return t;
  }

  /** `/posture-check-role-attributes`: the attributes posture checks declare (filter only, §4.1). */
  async roleAttributes(req: ListRequest): Promise<Page<string>> {
    return this.store.roleAttributes({ filter: req.filter });
  }

  /**
   * `/posture-check-role-attribute-usage`: the attributes posture checks declare or service
   * policies reference, each with `postureChecks` and `servicePolicies` usage.
   */
  async roleAttributeUsage(req: ListRequest, withIds: boolean): Promise<Page<Record<string, unknown>>> {
    const referenced = await this.policy.attributeUsage([], false).catch((err: unknown) => {
      this.log(`posture: GetRoleAttributeUsage failed, policies are not counted: ${(err as Error).message}`);
      return new Map<string, { count: number; ids: string[] }>();
    });
    const page = await this.store.roleAttributes(req, [...referenced.keys()], true);
    const owners = await this.store.attributeOwners(page.items);
    const usage = page.items.length > 0 ? await this.policy.attributeUsage(page.items, withIds).catch(() => referenced) : referenced;
    const source = (ids: string[] | undefined, count?: number) => ({ count: count ?? ids?.length ?? 0, ...(withIds ? { ids: ids ?? [] } : {}) });
    return {
      ...page,
      items: page.items.map((attr) => ({
        roleAttribute: attr,
        usage: {
          postureChecks: source(owners.get(attr)),
          servicePolicies: source(usage.get(attr)?.ids, usage.get(attr)?.count ?? 0),
        },
      })),
    };
  }
}
