import { ApiError } from '@ziti/errors';
import type { Pool } from 'pg';
import type { AuthPolicy, AuthPolicyFields } from '../domain/auth-model.js';
import type { ListRequest, Page } from '../domain/model.js';
import type { AuthPolicyRepository } from '../domain/ports.js';
import type { Prisma } from '../generated/prisma/client.js';
import { type Db, json, mapped } from './db.js';
import { inIdOrder, listIds } from './list-query.js';
import { AUTH_POLICY_QUERY } from './query-schemas.js';

type Row = Prisma.AuthPolicyGetPayload<object>;

export function toAuthPolicy(r: Row): AuthPolicy {
  return {
    id: r.id,
    name: r.name,
    isSystem: r.isSystem,
    primaryCertAllowed: r.primaryCertAllowed,
    primaryCertAllowExpiredCerts: r.primaryCertAllowExpiredCerts,
    primaryUpdbAllowed: r.primaryUpdbAllowed,
    primaryUpdbMinPasswordLength: r.primaryUpdbMinPasswordLength,
    primaryUpdbRequireSpecialChar: r.primaryUpdbRequireSpecialChar,
    primaryUpdbRequireNumberChar: r.primaryUpdbRequireNumberChar,
    primaryUpdbRequireMixedCase: r.primaryUpdbRequireMixedCase,
    primaryUpdbMaxAttempts: r.primaryUpdbMaxAttempts,
    primaryUpdbLockoutDurationMinutes: r.primaryUpdbLockoutDurationMins,
    primaryExtJwtAllowed: r.primaryExtJwtAllowed,
    primaryExtJwtAllowedSigners: r.primaryExtJwtAllowedSigners ?? [],
    secondaryRequireTotp: r.secondaryRequireTotp,
    secondaryRequiredExtJwtSigner: r.secondaryRequiredExtJwtSigner,
    tags: json(r.tags),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

function data(f: AuthPolicyFields) {
  return {
    name: f.name,
    primaryCertAllowed: f.primaryCertAllowed,
    primaryCertAllowExpiredCerts: f.primaryCertAllowExpiredCerts,
    primaryUpdbAllowed: f.primaryUpdbAllowed,
    primaryUpdbMinPasswordLength: f.primaryUpdbMinPasswordLength,
    primaryUpdbRequireSpecialChar: f.primaryUpdbRequireSpecialChar,
    primaryUpdbRequireNumberChar: f.primaryUpdbRequireNumberChar,
    primaryUpdbRequireMixedCase: f.primaryUpdbRequireMixedCase,
    primaryUpdbMaxAttempts: f.primaryUpdbMaxAttempts,
    primaryUpdbLockoutDurationMins: f.primaryUpdbLockoutDurationMinutes,
    primaryExtJwtAllowed: f.primaryExtJwtAllowed,
    primaryExtJwtAllowedSigners: f.primaryExtJwtAllowedSigners,
    secondaryRequireTotp: f.secondaryRequireTotp,
    secondaryRequiredExtJwtSigner: f.secondaryRequiredExtJwtSigner,
    tags: f.tags as Prisma.InputJsonObject,
  };
}

export class PrismaAuthPolicyRepository implements AuthPolicyRepository {
  constructor(
    private readonly db: Db,
    private readonly pool: Pool,
  ) {}

  async findById(id: string): Promise<AuthPolicy | null> {
    const r = await this.db.authPolicy.findUnique({ where: { id } });
    return r ? toAuthPolicy(r) : null;
  }

  async list(req: ListRequest): Promise<Page<AuthPolicy>> {
    const page = await listIds(this.pool, AUTH_POLICY_QUERY, req);
    const rows = page.ids.length > 0 ? await this.db.authPolicy.findMany({ where: { id: { in: page.ids } } }) : [];
    return { ...page, items: inIdOrder(page.ids, rows).map(toAuthPolicy) };
  }

  async create(id: string, fields: AuthPolicyFields): Promise<void> {
    await mapped(() => this.db.authPolicy.create({ data: { id, ...data(fields) } }), () => fields.name);
  }

  async update(id: string, fields: AuthPolicyFields): Promise<void> {
    await mapped(() => this.db.authPolicy.update({ where: { id }, data: { ...data(fields), updatedAt: new Date() } }), () => fields.name);
  }

  /** An identity assigned in the meantime (foreign key) still makes it referenced: 409. */
  async delete(id: string): Promise<void> {
    await mapped(() => this.db.authPolicy.delete({ where: { id } }), undefined, {
      identities_auth_policy_id_fkey: () =>
        ApiError.of('CAN_NOT_DELETE_REFERENCED_ENTITY', { cause: { field: 'authPolicyId', reason: 'entity type authPolicies referenced by identities', value: id } }),
    });
  }

  async idsReferencingSigner(signerId: string): Promise<string[]> {
    const rows = await this.db.authPolicy.findMany({
      where: { OR: [{ primaryExtJwtAllowedSigners: { has: signerId } }, { secondaryRequiredExtJwtSigner: signerId }] },
      select: { id: true },
      orderBy: { id: 'asc' },
    });
    return rows.map((r) => r.id);
  }
}
