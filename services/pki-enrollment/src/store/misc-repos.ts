import type { Pool } from 'pg';
import type { ApiSessionCertificate, ListRequest, Page, RouterCert } from '../domain/model.js';
import type { PkiRepository, RouterCertRepository, SessionCertRepository } from '../domain/ports.js';
import type { Prisma } from '../generated/prisma/client.js';
import { type Db, json } from './db.js';
import { inIdOrder, listIds } from './list-query.js';
import { SESSION_CERT_QUERY } from './query-schemas.js';

function toRouterCert(r: Prisma.RouterCertGetPayload<object>): RouterCert {
  return {
    routerId: r.routerId,
    routerType: r.routerType === 'transit' ? 'transit' : 'edge',
    fingerprint: r.fingerprint,
    certPem: r.certPem,
    serverCertPem: r.serverCertPem,
    updatedAt: r.updatedAt,
  };
}

export class PrismaRouterCertRepository implements RouterCertRepository {
  constructor(private readonly db: Db) {}

  async findByRouter(routerId: string): Promise<RouterCert | null> {
    const r = await this.db.routerCert.findUnique({ where: { routerId } });
    return r ? toRouterCert(r) : null;
  }

  async findByFingerprint(fingerprint: string): Promise<RouterCert | null> {
    const r = await this.db.routerCert.findUnique({ where: { fingerprint } });
    return r ? toRouterCert(r) : null;
  }

  async upsert(c: Omit<RouterCert, 'updatedAt'>): Promise<void> {
    const fields = { routerType: c.routerType, fingerprint: c.fingerprint, certPem: c.certPem, serverCertPem: c.serverCertPem, updatedAt: new Date() };
    await this.db.routerCert.upsert({ where: { routerId: c.routerId }, create: { routerId: c.routerId, ...fields }, update: fields });
  }

  async delete(routerId: string): Promise<boolean> {
    return (await this.db.routerCert.deleteMany({ where: { routerId } })).count > 0;
  }
}

/** The certificates of the sessions named (index on `api_session_id`), grouped by session, oldest first. */
const SESSION_FINGERPRINTS = `SELECT "api_session_id", lower("fingerprint") AS "fingerprint" FROM "api_session_certificates"
  WHERE "api_session_id" = ANY($1::text[]) ORDER BY "api_session_id", "created_at", "id"`;

function toSessionCert(r: Prisma.ApiSessionCertificateGetPayload<object>): ApiSessionCertificate {
  return {
    id: r.id,
    apiSessionId: r.apiSessionId,
    identityId: r.identityId,
    subject: r.subject,
    fingerprint: r.fingerprint,
    certPem: r.certPem,
    validFrom: r.validFrom,
    validTo: r.validTo,
    tags: json(r.tags),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

export class PrismaSessionCertRepository implements SessionCertRepository {
  constructor(
    private readonly db: Db,
    private readonly pool: Pool,
  ) {}

  async findById(id: string): Promise<ApiSessionCertificate | null> {
    const r = await this.db.apiSessionCertificate.findUnique({ where: { id } });
    return r ? toSessionCert(r) : null;
  }

  async list(req: ListRequest, apiSessionId: string): Promise<Page<ApiSessionCertificate>> {
    const page = await listIds(this.pool, SESSION_CERT_QUERY, req, { column: 'api_session_id', value: apiSessionId });
    const rows = page.ids.length > 0 ? await this.db.apiSessionCertificate.findMany({ where: { id: { in: page.ids } } }) : [];
    return { ...page, items: inIdOrder(page.ids, rows).map(toSessionCert) };
  }

  async create(c: Omit<ApiSessionCertificate, 'createdAt' | 'updatedAt' | 'tags'>): Promise<void> {
    await this.db.apiSessionCertificate.create({ data: { ...c } });
  }

  async delete(id: string): Promise<boolean> {
    return (await this.db.apiSessionCertificate.deleteMany({ where: { id } })).count > 0;
  }

  async deleteBySession(apiSessionId: string): Promise<number> {
    return (await this.db.apiSessionCertificate.deleteMany({ where: { apiSessionId } })).count;
  }

  async deleteExpired(apiSessionId: string, now: Date): Promise<number> {
    return (await this.db.apiSessionCertificate.deleteMany({ where: { apiSessionId, validTo: { lt: now } } })).count;
  }

  countBySession(apiSessionId: string): Promise<number> {
    return this.db.apiSessionCertificate.count({ where: { apiSessionId } });
  }

  async fingerprintsBySessions(apiSessionIds: readonly string[]): Promise<{ apiSessionId: string; fingerprint: string }[]> {
    const { rows } = await this.pool.query<{ api_session_id: string; fingerprint: string }>(SESSION_FINGERPRINTS, [apiSessionIds]);
    return rows.map((r) => ({ apiSessionId: r.api_session_id, fingerprint: r.fingerprint }));
  }
}

export class PrismaPkiRepository implements PkiRepository {
  constructor(private readonly db: Db) {}

  async find(name: string) {
    const r = await this.db.pkiMaterial.findUnique({ where: { name } });
    return r ? { certPem: r.certPem, keySealed: r.keySealed, sans: r.sans } : null;
  }

  async save(name: string, row: { certPem: string; keySealed: string; sans: string[] }): Promise<void> {
    await this.db.pkiMaterial.upsert({ where: { name }, create: { name, ...row }, update: { ...row, updatedAt: new Date() } });
  }

  async getSetting(key: string): Promise<string | null> {
    return (await this.db.setting.findUnique({ where: { key } }))?.value ?? null;
  }

  async setSetting(key: string, value: string): Promise<void> {
    await this.db.setting.upsert({ where: { key }, create: { key, value }, update: { value, updatedAt: new Date() } });
  }
}
