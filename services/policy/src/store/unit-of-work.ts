import { outboxInsert } from '@ziti/messaging';
import { prepared } from '@ziti/db-kit';
import type { DomainEvent, RdmChange, EntityType, Evaluator, Repositories, Transaction, UnitOfWork } from '../domain/ports.js';
import { toChangeEvents } from '../events/events.js';
import { SqlAccessReader, SqlServiceConfigRepository } from './access.js';
import { SqlConfigRepository, SqlConfigTypeRepository } from './configs.js';
import { type Database, lockEvaluation, type Sql } from './db.js';
import { ENTITY_TABLES, KINDS, evaluateEntity, evaluatePolicy, rebuildDerived, retractPolicy } from './evaluation.js';
import { SqlPolicyRepository, removeIdReferences } from './policies.js';
import { SqlIdentityProjection, SqlPostureCheckProjection } from './projections.js';
import { SqlRouterRepository } from './routers.js';
import { SqlServiceRepository } from './services.js';
import { SqlTerminatorRepository } from './terminators.js';
import { SqlUsageReader } from './usage.js';

function evaluator(sql: Sql): Evaluator {
  return {
    policy: (kind, shape, previousType) => evaluatePolicy(sql, kind, shape, previousType),
    retract: (kind, id, type) => retractPolicy(sql, kind, id, type),
    entity: (entity, id, attrs) => evaluateEntity(sql, entity, id, attrs),
    detach: (entity, id) => evaluateEntity(sql, entity, id, null),
    async removeReferences(entity: EntityType, id: string) {
      for (const [kind, k] of Object.entries(KINDS) as [keyof typeof KINDS, (typeof KINDS)[keyof typeof KINDS]][]) {
        const cols = k.sides.filter((s) => s.entity === entity).map((s) => s.rolesCol);
        if (cols.length > 0) await removeIdReferences(sql, kind, id, cols);
      }
    },
    rebuildAll: () => rebuildDerived(sql),
    async missingIds(entity, ids) {
      if (ids.length === 0) return [];
      const t = ENTITY_TABLES[entity];
      const { rows } = await sql.query<{ id: string }>(
        `SELECT x.id FROM unnest($1::text[]) AS x(id) WHERE NOT EXISTS (SELECT 1 FROM "${t.table}" e WHERE e."id" = x.id AND ${t.where})`,
        [ids],
      );
      return rows.map((r) => r.id);
    },
    async names(entity, ids) {
      if (ids.length === 0) return new Map();
      const t = ENTITY_TABLES[entity];
      const { rows } = await sql.query<{ id: string; name: string }>(`SELECT "id", "name" FROM "${t.table}" WHERE "id" = ANY($1::text[])`, [ids]);
      return new Map(rows.map((r) => [r.id, r.name]));
    },
  };
}

export function repositories(sql: Sql): Repositories {
  return {
    configTypes: new SqlConfigTypeRepository(sql),
    configs: new SqlConfigRepository(sql),
    services: new SqlServiceRepository(sql),
    terminators: new SqlTerminatorRepository(sql),
    routers: new SqlRouterRepository(sql),
    servicePolicies: new SqlPolicyRepository(sql, 'sp'),
    edgeRouterPolicies: new SqlPolicyRepository(sql, 'erp'),
    serviceEdgeRouterPolicies: new SqlPolicyRepository(sql, 'serp'),
    identities: new SqlIdentityProjection(sql),
    postureChecks: new SqlPostureCheckProjection(sql),
    access: new SqlAccessReader(sql),
    serviceConfigs: new SqlServiceConfigRepository(sql),
    usage: new SqlUsageReader(sql),
    evaluator: evaluator(sql),
  };
}

/**
 * The router data model changes this transaction made (noted by the triggers of the
 * `rdm_pending` migration), and those of transactions that ended without taking theirs (a
 * restore, SQL run by hand). Transactions that never wrote are not given an id for it.
 */
const DRAIN_RDM = `DELETE FROM "rdm_pending" WHERE "txid" = txid_current_if_assigned() OR "txid" < txid_snapshot_xmin(txid_current_snapshot()) RETURNING "kind", "id"`;

async function drainRdmChanges(sql: Sql): Promise<RdmChange[]> {
  const { rows } = await sql.query<RdmChange>(prepared(DRAIN_RDM, []));
  return rows;
}

/**
 * Transactions over pg with the outbox: every transaction first takes the evaluation lock (writes
 * that change policy evaluation are serialised, so two of them never evaluate against each
 * other's stale state); events emitted inside are inserted before COMMIT, and the relay is nudged
 * once it committed.
 */
export class SqlUnitOfWork implements UnitOfWork {
  readonly repos: Repositories;

  constructor(
    private readonly db: Database,
    private readonly afterCommit: () => void,
  ) {
    this.repos = repositories(db.pool);
  }

  async run<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    let emitted = false;
    const result = await this.db.tx(async (sql) => {
      await lockEvaluation(sql);
      const events: DomainEvent[] = [];
      const tx: Transaction = { ...repositories(sql), emit: (...e) => void events.push(...e) };
      const out = await fn(tx);
      const rdm = await drainRdmChanges(sql);
      if (rdm.length > 0) events.push({ type: 'router-data-model.changed', changes: rdm });
      const changes = toChangeEvents(events);
      if (changes.length > 0) {
        for (let i = 0; i < changes.length; i += 200) {
          const { text, values } = outboxInsert(changes.slice(i, i + 200));
          await sql.query(text, values);
        }
        emitted = true;
      }
      return out;
    });
    if (emitted) this.afterCommit();
    return result;
  }
}
