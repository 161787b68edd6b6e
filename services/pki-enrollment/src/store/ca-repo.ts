import { ApiError } from '@ziti/errors';
import type { Pool } from 'pg';
import type { ExternalIdClaimSpec } from '../crypto/claims.js';
import type { Ca, ListRequest, Page } from '../domain/model.js';
import type { CaRepository } from '../domain/ports.js';
import { Prisma } from '../generated/prisma/client.js';
import { type Db, json, mapped } from './db.js';
import { inIdOrder, listIds } from './list-query.js';
import { CA_QUERY } from './query-schemas.js';

type Row = Prisma.CaGetPayload<object>;

function toCa(r: Row): Ca {
  return {
    id: r.id,
    name: r.name,
    fingerprint: r.fingerprint,
    certPem: r.certPem,
    isVerified: r.isVerified,
    verificationToken: r.verificationToken,
    isAutoCaEnrollmentEnabled: r.isAutoCaEnrollmentEnabled,
    isOttCaEnrollmentEnabled: r.isOttCaEnrollmentEnabled,
    isAuthEnabled: r.isAuthEnabled,
    identityRoles: r.identityRoles ?? [],
    identityNameFormat: r.identityNameFormat,
    externalIdClaim: r.externalIdClaim ? (r.externalIdClaim as unknown as ExternalIdClaimSpec) : null,
    trustedForAdmins: r.trustedForAdmins,
    tags: json(r.tags),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

function data(ca: Omit<Ca, 'createdAt' | 'updatedAt' | 'id' | 'fingerprint' | 'certPem' | 'verificationToken'>) {
  return {
    name: ca.name,
    isVerified: ca.isVerified,
    isAutoCaEnrollmentEnabled: ca.isAutoCaEnrollmentEnabled,
    isOttCaEnrollmentEnabled: ca.isOttCaEnrollmentEnabled,
    isAuthEnabled: ca.isAuthEnabled,
    identityRoles: ca.identityRoles,
    identityNameFormat: ca.identityNameFormat,
    externalIdClaim: ca.externalIdClaim ? (ca.externalIdClaim as unknown as Prisma.InputJsonObject) : Prisma.DbNull,
    trustedForAdmins: ca.trustedForAdmins,
    tags: ca.tags as Prisma.InputJsonObject,
  };
}

const onUnique = (ca: { name: string; certPem?: string }) => (text: string) =>
  /fingerprint/.test(text) ? ApiError.field('certPem', 'certificate already used as CA', ca.certPem) : ApiError.field('name', 'name must be unique', ca.name);

export class PrismaCaRepository implements CaRepository {
  constructor(
    private readonly db: Db,
    private readonly pool: Pool,
  ) {}

  async findById(id: string): Promise<Ca | null> {
    const r = await this.db.ca.findUnique({ where: { id } });
    return r ? toCa(r) : null;
  }

  async findByFingerprint(fingerprint: string): Promise<Ca | null> {
    const r = await this.db.ca.findUnique({ where: { fingerprint } });
    return r ? toCa(r) : null;
  }

  async listVerified(): Promise<Ca[]> {
    return (await this.db.ca.findMany({ where: { isVerified: true }, orderBy: { createdAt: 'asc' } })).map(toCa);
  }

  count(): Promise<number> {
    return this.db.ca.count();
  }

  async list(req: ListRequest): Promise<Page<Ca>> {
    const page = await listIds(this.pool, CA_QUERY, req);
    const rows = page.ids.length > 0 ? await this.db.ca.findMany({ where: { id: { in: page.ids } } }) : [];
    return { ...page, items: inIdOrder(page.ids, rows).map(toCa) };
  }

  async create(ca: Omit<Ca, 'createdAt' | 'updatedAt'>): Promise<void> {
    await mapped(
      () => this.db.ca.create({ data: { ...data(ca), id: ca.id, fingerprint: ca.fingerprint, certPem: ca.certPem, verificationToken: ca.verificationToken } }),
      onUnique(ca),
    );
  }

  async update(ca: Ca): Promise<void> {
    await mapped(() => this.db.ca.update({ where: { id: ca.id }, data: { ...data(ca), updatedAt: new Date() } }), onUnique(ca));
  }

  async delete(id: string): Promise<boolean> {
    return (await this.db.ca.deleteMany({ where: { id } })).count > 0;
  }
}
