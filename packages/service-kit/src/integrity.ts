import { type ServiceError, status } from '@grpc/grpc-js';
import { toGrpcError } from '@ziti/errors';
import {
  type CheckIntegrityRequest,
  type CheckProjectionRequest,
  type ExistingIdsRequest,
  type ExistingIdsResponse,
  type IntegrityFindings,
  IntegrityServiceService,
  type ListProjectionSourcesRequest,
  type ListProjectionSourcesResponse,
  type ListReferencesRequest,
  type ListReferencesResponse,
  type RepairReferencesRequest,
} from '@ziti/proto';
import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import type { GrpcServiceBinding } from './grpc.js';

/** The most results one run (and one call) reports; beyond it only `tooMany` says there were more. */
export const MAX_INTEGRITY_RESULTS = 1000;

/**
 * References younger than this are not judged: a row may name an entity whose creating
 * transaction in its own context has not committed yet (an identity's enrollment is written
 * inside identity-auth's create transaction).
 */
export const REFERENCE_GRACE_SECONDS = 30;

/** Outbox rows unpublished for longer than this are reported (a relay polls every half second). */
export const OUTBOX_STUCK_SECONDS = 60;

/** Collects findings up to a limit. */
export class Findings {
  readonly results: { description: string; fixed: boolean }[] = [];
  tooMany = false;
  constructor(readonly limit: number = MAX_INTEGRITY_RESULTS) {}

  add(description: string, fixed: boolean): void {
    if (this.results.length < this.limit) this.results.push({ description, fixed });
    else this.tooMany = true;
  }

  /** Room for more? (A check may stop looking once it is full.) */
  get full(): boolean {
    return this.results.length >= this.limit;
  }

  toMessage(): IntegrityFindings {
    return { results: this.results, tooMany: this.tooMany };
  }
}

/** A request's limit, bounded to 1..MAX_INTEGRITY_RESULTS (0 or absent = the maximum). */
export function findingsFor(limit: number | undefined): Findings {
  const n = Number(limit) || 0;
  return new Findings(n > 0 ? Math.min(n, MAX_INTEGRITY_RESULTS) : MAX_INTEGRITY_RESULTS);
}

/** What a context implements of `IntegrityService`; the rest answers UNIMPLEMENTED. */
export interface IntegrityHandlers {
  checkIntegrity(req: CheckIntegrityRequest): Promise<IntegrityFindings>;
  listReferences(req: ListReferencesRequest): Promise<ListReferencesResponse>;
  existingIds(req: ExistingIdsRequest): Promise<ExistingIdsResponse>;
  repairReferences(req: RepairReferencesRequest): Promise<IntegrityFindings>;
  listProjectionSources(req: ListProjectionSourcesRequest): Promise<ListProjectionSourcesResponse>;
  checkProjection(req: CheckProjectionRequest): Promise<IntegrityFindings>;
}

const METHODS: (keyof IntegrityHandlers)[] = [
  'checkIntegrity',
  'listReferences',
  'existingIds',
  'repairReferences',
  'listProjectionSources',
  'checkProjection',
];

/** The `IntegrityService` binding of a context, from the handlers it has. */
export function integrityService(handlers: Partial<IntegrityHandlers>): GrpcServiceBinding {
  const impl: Record<string, unknown> = {};
  for (const name of METHODS) {
    const fn = handlers[name] as ((req: unknown) => Promise<unknown>) | undefined;
    impl[name] = (call: { request: unknown }, callback: (err: Partial<ServiceError> | null, res?: unknown) => void) => {
      if (!fn) return callback({ code: status.UNIMPLEMENTED, details: `${name} is not served by this context` });
      fn(call.request).then(
        (res) => callback(null, res),
        (err: unknown) => callback(toGrpcError(err)),
      );
    };
  }
  return { definition: IntegrityServiceService, implementation: impl as UntypedServiceImplementation };
}

/** Something that runs SQL (a pg pool). */
export interface IntegritySql {
  query(text: string, params?: unknown[]): Promise<{ rows: any[]; rowCount: number | null }>;
}

/**
 * The outbox check every context makes: rows unpublished for longer than
 * {@link OUTBOX_STUCK_SECONDS}. With `fix`, `flush` publishes them (the context's relay) and a row
 * counts as fixed once it is marked published.
 */
export async function checkOutbox(sql: IntegritySql, context: string, fix: boolean, flush: () => Promise<void>, findings: Findings): Promise<void> {
  const stuck = await sql.query(
    `SELECT "id", "type", "occurred_at" FROM "outbox_events" WHERE "published_at" IS NULL
      AND "occurred_at" < now() - make_interval(secs => $1) ORDER BY "occurred_at", "id" LIMIT $2`,
    [OUTBOX_STUCK_SECONDS, findings.limit + 1],
  );
  if (stuck.rows.length === 0) return;
  let published = new Set<string>();
  if (fix) {
    await flush();
    const after = await sql.query(`SELECT "id" FROM "outbox_events" WHERE "id" = ANY($1::uuid[]) AND "published_at" IS NOT NULL`, [stuck.rows.map((r) => r.id)]);
    published = new Set(after.rows.map((r) => r.id as string));
  }
  for (const r of stuck.rows) {
    const at = r.occurred_at instanceof Date ? r.occurred_at.toISOString() : String(r.occurred_at);
    findings.add(`${context}: outbox event ${r.id} (${r.type}) of ${at} was never published`, published.has(r.id));
  }
}

/** How findings name the kinds of referenced entities. */
export const REFERENCE_KIND_NAMES: Readonly<Record<string, string>> = {
  identity: 'identity',
  'api-session': 'API session',
  service: 'service',
  router: 'router',
  ca: 'CA',
};

/** The context that owns each kind of referenced entity. */
export const REFERENCE_OWNERS: Readonly<Record<string, string>> = {
  identity: 'identity-auth',
  'api-session': 'identity-auth',
  service: 'policy',
  router: 'policy',
  ca: 'pki-enrollment',
};

/**
 * A column of a context's table that holds the id of another context's entity (no foreign key can
 * cross schemas). Names are the context's own, fixed in its code, never request text.
 */
export interface ReferenceColumn {
  kind: string;
  table: string;
  /** The row's own key, shown in findings. */
  idColumn: string;
  refColumn: string;
  /** When the row was written: rows younger than REFERENCE_GRACE_SECONDS are not judged. */
  ageColumn: string;
  /** What a row is, in findings: `enrollment`, `session`… */
  noun: string;
}

/** The distinct ids of `kind` the columns refer to, byte-wise ascending after `after`. */
export async function listReferenceIds(sql: IntegritySql, columns: readonly ReferenceColumn[], kind: string, after: string, limit: number): Promise<string[]> {
  const of = columns.filter((c) => c.kind === kind);
  if (of.length === 0) return [];
  const parts = of.map(
    (c) =>
      `SELECT "${c.refColumn}" COLLATE "C" AS id FROM "${c.table}" WHERE "${c.refColumn}" IS NOT NULL
        AND "${c.refColumn}" COLLATE "C" > $1 AND "${c.ageColumn}" < now() - make_interval(secs => $3)`,
  );
  const { rows } = await sql.query(`SELECT DISTINCT id FROM (${parts.join(' UNION ALL ')}) r ORDER BY id LIMIT $2`, [after, limit, REFERENCE_GRACE_SECONDS]);
  return rows.map((r) => r.id as string);
}

/**
 * Reports the rows that refer to gone ids of `kind` and, with `fix`, deletes them (one statement
 * per table; a row counts as fixed when that statement deleted it).
 */
export async function repairReferenceRows(
  sql: IntegritySql,
  context: string,
  columns: readonly ReferenceColumn[],
  kind: string,
  goneIds: readonly string[],
  fix: boolean,
  findings: Findings,
): Promise<void> {
  if (goneIds.length === 0) return;
  for (const c of columns.filter((col) => col.kind === kind)) {
    const { rows } = await sql.query(
      `SELECT "${c.idColumn}" AS id, "${c.refColumn}" AS ref FROM "${c.table}" WHERE "${c.refColumn}" = ANY($1::text[])
        AND "${c.ageColumn}" < now() - make_interval(secs => $3) ORDER BY 1 LIMIT $2`,
      [goneIds, findings.limit + 1, REFERENCE_GRACE_SECONDS],
    );
    if (rows.length === 0) continue;
    let deleted = new Set<string>();
    if (fix) {
      const done = await sql.query(`DELETE FROM "${c.table}" WHERE "${c.idColumn}" = ANY($1::text[]) AND "${c.refColumn}" = ANY($2::text[]) RETURNING "${c.idColumn}" AS id`, [
        rows.map((r) => r.id),
        goneIds,
      ]);
      deleted = new Set(done.rows.map((r) => r.id as string));
    }
    const name = REFERENCE_KIND_NAMES[kind] ?? kind;
    for (const r of rows) {
      findings.add(`${context}: ${c.noun} ${r.id} refers to ${name} ${r.ref}, which ${REFERENCE_OWNERS[kind] ?? 'its owner'} no longer has`, deleted.has(r.id));
    }
  }
}

/** A page size asked for by the gateway, bounded to 1..1000 (500 when unset). */
export function integrityPageSize(limit: number | undefined): number {
  return Math.min(Math.max(Number(limit) || 500, 1), 1000);
}

/** `checkIntegrity` of a context whose own check is its outbox alone. */
export function outboxIntegrityCheck(sql: IntegritySql, context: string, flush: () => Promise<void>): Pick<IntegrityHandlers, 'checkIntegrity'> {
  return {
    async checkIntegrity(req) {
      const findings = findingsFor(req.limit);
      await checkOutbox(sql, context, req.fix, flush, findings);
      return findings.toMessage();
    },
  };
}

/** `listReferences` and `repairReferences` over a context's reference columns. */
export function referenceIntegrity(sql: IntegritySql, context: string, columns: readonly ReferenceColumn[]): Pick<IntegrityHandlers, 'listReferences' | 'repairReferences'> {
  return {
    async listReferences(req) {
      return { ids: await listReferenceIds(sql, columns, req.kind, req.after, integrityPageSize(req.limit)) };
    },
    async repairReferences(req) {
      const findings = findingsFor(req.limit);
      await repairReferenceRows(sql, context, columns, req.kind, req.ids, req.fix, findings);
      return findings.toMessage();
    },
  };
}
