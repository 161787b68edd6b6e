import { ApiError } from '@ziti/errors';
import { shortId } from '@ziti/http-kit';
import type { AuthPolicy, AuthPolicyFields } from './auth-model.js';
import { type AuthPolicyInput, changesSessions, fullAuthPolicy, patchedAuthPolicy, referencedSigners } from './auth-policy-rules.js';
import type { ListRequest, Page } from './model.js';
import type { PrincipalCache, Transaction, UnitOfWork } from './ports.js';

/** `CAN_NOT_DELETE_REFERENCED_ENTITY` (409) naming the referencing entities, as boltz reports it. */
export function referencedError(entity: string, by: string, field: string, ids: string[]): ApiError {
  const list = `[${ids.join(' ')}]`;
  return ApiError.of('CAN_NOT_DELETE_REFERENCED_ENTITY', {
    cause: { field, value: list, reason: `entity type ${entity} referenced by ${by}: ${list}` },
  });
}

/** Management of auth policies (§6.1): CRUD, the system `default`, signer references. */
export class AuthPolicyManager {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly cache: PrincipalCache,
  ) {}

  list(req: ListRequest): Promise<Page<AuthPolicy>> {
    return this.uow.repos.authPolicies.list(req);
  }

  async detail(id: string): Promise<AuthPolicy> {
    const p = await this.uow.repos.authPolicies.findById(id);
    if (!p) throw ApiError.notFound();
    return p;
  }

  async create(input: AuthPolicyInput): Promise<string> {
    const fields = fullAuthPolicy(input);
    const id = shortId();
    await this.uow.run(async (tx) => {
      await checkSigners(tx, fields);
      await tx.authPolicies.create(id, fields);
      await tx.emit({ type: 'auth-policy.created', authPolicyId: id, tokens: [] });
    });
    return id;
  }

  update(id: string, input: AuthPolicyInput): Promise<void> {
    return this.change(id, () => fullAuthPolicy(input));
  }

  patch(id: string, input: AuthPolicyInput): Promise<void> {
    return this.change(id, (current) => patchedAuthPolicy(current, input));
  }

  /** The system policy and policies identities use are referenced: 409. */
  async delete(id: string): Promise<void> {
    await this.uow.run(async (tx) => {
      await tx.lock(`auth-policy:${id}`);
      const current = await tx.authPolicies.findById(id);
      if (!current) throw ApiError.notFound();
      if (current.isSystem) throw referencedError('authPolicies', 'system', 'isSystem', [id]);
      const users = await tx.identities.idsWithAuthPolicy(id, 20);
      if (users.length > 0) throw referencedError('authPolicies', 'identities', 'authPolicyId', users);
      await tx.authPolicies.delete(id);
      await tx.emit({ type: 'auth-policy.deleted', authPolicyId: id, tokens: [] });
    });
  }

  private async change(id: string, next: (current: AuthPolicyFields) => AuthPolicyFields): Promise<void> {
    const tokens = await this.uow.run(async (tx) => {
      await tx.lock(`auth-policy:${id}`);
      const current = await tx.authPolicies.findById(id);
      if (!current) throw ApiError.notFound();
      const fields = next(current);
      await checkSigners(tx, fields);
      await tx.authPolicies.update(id, fields);
      const affected = changesSessions(current, fields) ? await tx.apiSessions.tokensOfAuthPolicy(id) : [];
      await tx.emit({ type: 'auth-policy.updated', authPolicyId: id, tokens: affected });
      return affected;
    });
    // Whether those sessions are fully authenticated may have changed.
    await this.cache.drop(tokens);
  }
}

/** Every named signer must exist: an unknown one is 404 NOT_FOUND (auth_policy_test). */
async function checkSigners(tx: Transaction, fields: AuthPolicyFields): Promise<void> {
  const named = referencedSigners(fields);
  if (named.length === 0) return;
  await tx.lock('external-jwt-signers');
  const found = new Set(await tx.signers.existing(named));
  const missing = named.filter((s) => !found.has(s));
  if (missing.length > 0) throw ApiError.notFound(`external jwt signer with id ${missing[0]} not found`);
}
