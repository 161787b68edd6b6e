import { ApiError } from '@ziti/errors';
import type { Pool } from 'pg';
import type { ExternalJwtSigner, ExternalJwtSignerFields, SignerCertFacts } from '../domain/auth-model.js';
import type { ListRequest, Page } from '../domain/model.js';
import type { ExternalJwtSignerRepository } from '../domain/ports.js';
import type { Prisma } from '../generated/prisma/client.js';
import { type Db, json, mapped } from './db.js';
import { inIdOrder, listIds } from './list-query.js';
import { SIGNER_QUERY } from './query-schemas.js';

type Row = Prisma.ExternalJwtSignerGetPayload<object>;

function toSigner(r: Row): ExternalJwtSigner {
  return {
    id: r.id,
    name: r.name,
    enabled: r.enabled,
    issuer: r.issuer,
    audience: r.audience,
    certPem: r.certPem,
    jwksEndpoint: r.jwksEndpoint,
    kid: r.kid,
    claimsProperty: r.claimsProperty,
    useExternalId: r.useExternalId,
    externalAuthUrl: r.externalAuthUrl,
    clientId: r.clientId,
    scopes: r.scopes ?? [],
    targetToken: r.targetToken === 'ID' ? 'ID' : 'ACCESS',
    enrollToCertEnabled: r.enrollToCertEnabled,
    enrollToTokenEnabled: r.enrollToTokenEnabled,
    enrollNameClaimsSelector: r.enrollNameClaimsSelector,
    enrollAttributeClaimsSelector: r.enrollAttributeClaimsSelector,
    enrollAuthPolicyId: r.enrollAuthPolicyId,
    trustedForAdmins: r.trustedForAdmins,
    tags: json(r.tags),
    fingerprint: r.fingerprint,
    commonName: r.commonName,
    notBefore: r.notBefore,
    notAfter: r.notAfter,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

function data(f: ExternalJwtSignerFields, c: SignerCertFacts) {
  return { ...f, ...c, scopes: f.scopes, tags: f.tags as Prisma.InputJsonObject };
}

/** Unique columns of signers: each violation is the field error `<field> must be unique`. */
const UNIQUE: Record<string, () => ApiError> = Object.fromEntries(
  ['name', 'issuer', 'kid', 'fingerprint'].map((f) => [`external_jwt_signers_${f}_key`, () => ApiError.field(f, `${f} must be unique`)]),
);

function valueOf(field: string, f: ExternalJwtSignerFields, c: SignerCertFacts): unknown {
  return field === 'fingerprint' ? c.fingerprint : (f as unknown as Record<string, unknown>)[field];
}

export class PrismaSignerRepository implements ExternalJwtSignerRepository {
  constructor(
    private readonly db: Db,
    private readonly pool: Pool,
  ) {}

  async findById(id: string): Promise<ExternalJwtSigner | null> {
    const r = await this.db.externalJwtSigner.findUnique({ where: { id } });
    return r ? toSigner(r) : null;
  }

  async list(req: ListRequest, enabledOnly = false): Promise<Page<ExternalJwtSigner>> {
    const page = await listIds(this.pool, SIGNER_QUERY, req, enabledOnly ? { sql: '"e"."enabled"', params: [] } : undefined);
    const rows = page.ids.length > 0 ? await this.db.externalJwtSigner.findMany({ where: { id: { in: page.ids } } }) : [];
    return { ...page, items: inIdOrder(page.ids, rows).map(toSigner) };
  }

  async enabled(): Promise<ExternalJwtSigner[]> {
    const rows = await this.db.externalJwtSigner.findMany({ where: { enabled: true }, orderBy: { id: 'asc' } });
    return rows.map(toSigner);
  }

  async existing(ids: string[]): Promise<string[]> {
    const rows = await this.db.externalJwtSigner.findMany({ where: { id: { in: ids } }, select: { id: true } });
    return rows.map((r) => r.id);
  }

  async create(id: string, fields: ExternalJwtSignerFields, cert: SignerCertFacts, trustedForAdmins: boolean): Promise<void> {
    await mapped(() => this.db.externalJwtSigner.create({ data: { id, ...data(fields, cert), trustedForAdmins } }), (f) => valueOf(f, fields, cert), UNIQUE);
  }

  async update(id: string, fields: ExternalJwtSignerFields, cert: SignerCertFacts, trustedForAdmins: boolean): Promise<void> {
    await mapped(
      () => this.db.externalJwtSigner.update({ where: { id }, data: { ...data(fields, cert), trustedForAdmins, updatedAt: new Date() } }),
      (f) => valueOf(f, fields, cert),
      UNIQUE,
    );
  }

  async delete(id: string): Promise<void> {
    await this.db.externalJwtSigner.delete({ where: { id } });
  }
}
