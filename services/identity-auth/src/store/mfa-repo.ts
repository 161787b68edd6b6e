import { ApiError } from '@ziti/errors';
import type { MfaRepository, StoredMfa } from '../domain/ports.js';
import type { Prisma } from '../generated/prisma/client.js';
import { type Db, json, mapped } from './db.js';

const toStored = (r: Prisma.MfaGetPayload<object>): StoredMfa => ({
  id: r.id,
  identityId: r.identityId,
  isVerified: r.isVerified,
  secret: r.secret,
  recoveryCodes: r.recoveryCodes,
  tags: json(r.tags),
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

export class PrismaMfaRepository implements MfaRepository {
  constructor(private readonly db: Db) {}

  async findByIdentity(identityId: string): Promise<StoredMfa | null> {
    const r = await this.db.mfa.findUnique({ where: { identityId } });
    return r ? toStored(r) : null;
  }

  async findByIdentityForUpdate(identityId: string): Promise<StoredMfa | null> {
    const locked = await this.db.$queryRaw<{ id: string }[]>`SELECT "id" FROM "mfas" WHERE "identity_id" = ${identityId} FOR UPDATE`;
    return locked.length > 0 ? this.findByIdentity(identityId) : null;
  }

  async create(m: Omit<StoredMfa, 'createdAt' | 'updatedAt'>): Promise<void> {
    await mapped(() => this.db.mfa.create({ data: { ...m, tags: m.tags as Prisma.InputJsonObject } }), undefined, {
      mfas_identity_id_key: () => ApiError.of('MFA_EXISTS'),
    });
  }

  async update(id: string, change: { isVerified?: boolean; recoveryCodes?: string }): Promise<void> {
    await this.db.mfa.update({ where: { id }, data: { ...change, updatedAt: new Date() } });
  }

  async deleteByIdentity(identityId: string): Promise<boolean> {
    return (await this.db.mfa.deleteMany({ where: { identityId } })).count > 0;
  }
}
