import { ApiError } from '@ziti/errors';
import { shortId } from '@ziti/http-kit';
import { type Actor, type IdentityInput, assertMayWrite, fullFields, patchedFields } from './identity-rules.js';
import type { IdentityFields, IdentityView, ListRequest, Page, RoleFilter } from './model.js';
import type { PrincipalCache, Transaction, UnitOfWork } from './ports.js';

/** Management of identities: CRUD with the controller's rules, events and cache invalidation. */
export class IdentityManager {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly cache: PrincipalCache,
  ) {}

  list(req: ListRequest, roleFilter?: RoleFilter): Promise<Page<IdentityView>> {
    return this.uow.repos.identities.list(req, roleFilter);
  }

  async detail(id: string): Promise<IdentityView> {
    const view = await this.uow.repos.identities.view(id);
    if (!view) throw ApiError.notFound();
    return view;
  }

  async create(actor: Actor, input: IdentityInput): Promise<string> {
    const fields = fullFields(input);
    assertMayWrite(actor, fields, null);
    const id = shortId();
    await this.uow.run(async (tx) => {
      await checkReferences(tx, fields);
      await tx.identities.create({ ...fields, id, isDefaultAdmin: false });
      await tx.emit({ type: 'identity.created', identityId: id });
    });
    return id;
  }

  /** PUT: every updatable field is replaced; omitted ones are cleared or defaulted. */
  update(actor: Actor, id: string, input: IdentityInput): Promise<void> {
    return this.change(actor, id, () => fullFields(input));
  }

  /** PATCH: only the fields present in the body change. */
  patch(actor: Actor, id: string, input: IdentityInput): Promise<void> {
    return this.change(actor, id, (current) => patchedFields(current, input));
  }

  async delete(actor: Actor, id: string): Promise<void> {
    const tokens = await this.uow.run(async (tx) => {
      const current = await tx.identities.findByIdForUpdate(id);
      if (!current) throw ApiError.notFound();
      if (current.isDefaultAdmin) throw ApiError.of('ENTITY_CAN_NOT_BE_DELETED');
      assertMayWrite(actor, null, current);
      const sessions = await tx.apiSessions.deleteByIdentity(id);
      await tx.identities.delete(id);
      const all = sessions.map((s) => s.token);
      await tx.emit(
        ...sessions.map((s) => ({ type: 'api-session.deleted' as const, apiSessionId: s.id, identityId: id, tokens: [s.token] })),
        { type: 'identity.deleted', identityId: id, tokens: all },
      );
      return all;
    });
    await this.cache.drop(tokens);
  }

  private async change(actor: Actor, id: string, next: (current: IdentityFields) => IdentityFields): Promise<void> {
    const tokens = await this.uow.run(async (tx) => {
      const current = await tx.identities.findByIdForUpdate(id);
      if (!current) throw ApiError.notFound();
      const fields = next(current);
      assertMayWrite(actor, fields, current);
      if (fields.authPolicyId !== current.authPolicyId) await checkReferences(tx, fields);
      await tx.identities.update(id, fields);
      const sessionTokens = await tx.apiSessions.tokensOfIdentity(id);
      await tx.emit({ type: 'identity.updated', identityId: id, tokens: sessionTokens });
      return sessionTokens;
    });
    // The cached principals of its sessions may now be wrong (isAdmin, permissions, name…).
    await this.cache.drop(tokens);
  }
}

async function checkReferences(tx: Transaction, fields: IdentityFields): Promise<void> {
  if (!(await tx.authPolicies.findById(fields.authPolicyId))) {
    throw ApiError.field('authPolicyId', 'no auth policy found with the given id', fields.authPolicyId);
  }
}
