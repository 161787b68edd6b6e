import type { EntityEvaluation, EntityType, PolicyEvaluation, PolicyKind, PolicyShape } from '../domain/ports.js';
import type { Selector } from '../domain/roles.js';
import type { Sql } from './db.js';

/**
 * Write-time policy evaluation (reference §5.2, design decision 10), as set-based SQL run inside
 * the writing transaction:
 * - policy ↔ entity links (`sp_identities`, `erp_edge_routers`, …) say which entities each policy selects;
 * - ref-counted pairs (`identity_services.dial|bind`, `identity_edge_routers.n`,
 *   `service_edge_routers.n`) count the policies that link two entities; a pair row exists while a
 *   count is above zero.
 * A policy write re-selects its sides and applies the pair delta (added × new ∪ kept × added,
 * and the reverse for removals); an entity write re-matches the entity against every policy of
 * the kinds it takes part in. The results stay checkable: `recomputePairs` derives the counts
 * from the links alone (the data integrity check of a later issue compares both).
 */

export type { EntityType, PolicyKind };

interface SideDef {
  entity: EntityType;
  rolesCol: string;
  link: string;
  linkCol: string;
}

interface PairDef {
  table: string;
  colA: string;
  colB: string;
  /** Indexes into `sides`. */
  a: number;
  b: number;
  counters: string[];
}

interface KindDef {
  table: string;
  sides: SideDef[];
  pair: PairDef;
}

export const ENTITY_TABLES: Record<EntityType, { table: string; where: string; plural: string }> = {
  identity: { table: 'identities', where: 'TRUE', plural: 'identities' },
  service: { table: 'services', where: 'TRUE', plural: 'services' },
  edgeRouter: { table: 'routers', where: `"kind" = 'edge'`, plural: 'edgeRouters' },
  postureCheck: { table: 'posture_checks', where: 'TRUE', plural: 'postureChecks' },
};

export const KINDS: Record<PolicyKind, KindDef> = {
  sp: {
    table: 'service_policies',
    sides: [
      { entity: 'identity', rolesCol: 'identity_roles', link: 'sp_identities', linkCol: 'identity_id' },
      { entity: 'service', rolesCol: 'service_roles', link: 'sp_services', linkCol: 'service_id' },
      { entity: 'postureCheck', rolesCol: 'posture_check_roles', link: 'sp_posture_checks', linkCol: 'posture_check_id' },
    ],
    pair: { table: 'identity_services', colA: 'identity_id', colB: 'service_id', a: 0, b: 1, counters: ['dial', 'bind'] },
  },
  erp: {
    table: 'edge_router_policies',
    sides: [
      { entity: 'identity', rolesCol: 'identity_roles', link: 'erp_identities', linkCol: 'identity_id' },
      { entity: 'edgeRouter', rolesCol: 'edge_router_roles', link: 'erp_edge_routers', linkCol: 'router_id' },
    ],
    pair: { table: 'identity_edge_routers', colA: 'identity_id', colB: 'router_id', a: 0, b: 1, counters: ['n'] },
  },
  serp: {
    table: 'service_edge_router_policies',
    sides: [
      { entity: 'service', rolesCol: 'service_roles', link: 'serp_services', linkCol: 'service_id' },
      { entity: 'edgeRouter', rolesCol: 'edge_router_roles', link: 'serp_edge_routers', linkCol: 'router_id' },
    ],
    pair: { table: 'service_edge_routers', colA: 'service_id', colB: 'router_id', a: 0, b: 1, counters: ['n'] },
  },
};


/** What changed for a policy write: per side, the entity ids added and removed. */
export interface SideDelta {
  added: string[];
  removed: string[];
}

/** SQL that selects the ids of one side's entities: `@id`s, `#all`, `#attr`s under the semantic. */
export function selectorSql(entity: EntityType, s: Selector, firstParam: number): { sql: string; params: unknown[] } {
  const t = ENTITY_TABLES[entity];
  const params: unknown[] = [];
  const parts: string[] = [];
  if (s.all) parts.push('TRUE');
  else {
    if (s.ids.length > 0) {
      params.push(s.ids);
      parts.push(`e."id" = ANY($${firstParam + params.length - 1}::text[])`);
    }
    if (s.attrs.length > 0) {
      params.push(s.attrs);
      parts.push(`e."role_attributes" ${s.semantic === 'AnyOf' ? '&&' : '@>'} $${firstParam + params.length - 1}::text[]`);
    }
  }
  const match = parts.length > 0 ? parts.join(' OR ') : 'FALSE';
  return { sql: `SELECT e."id" FROM "${t.table}" e WHERE (${t.where}) AND (${match})`, params };
}

/** Counter values (one per pair counter column) that one policy contributes. */
function unitCounters(kind: PolicyKind, type?: string): number[] {
  return kind === 'sp' ? [type === 'Bind' ? 0 : 1, type === 'Bind' ? 1 : 0] : [1];
}

/** Re-selects one side of a policy and writes the link difference. */
async function syncSide(sql: Sql, side: SideDef, policyId: string, s: Selector): Promise<SideDelta> {
  const sel = selectorSql(side.entity, s, 2);
  const { rows } = await sql.query<{ op: string; id: string }>(
    `WITH "new" AS (${sel.sql}),
       "ins" AS (INSERT INTO "${side.link}" ("policy_id", "${side.linkCol}")
                 SELECT $1, n."id" FROM "new" n ON CONFLICT DO NOTHING RETURNING "${side.linkCol}" AS id),
       "del" AS (DELETE FROM "${side.link}" l WHERE l."policy_id" = $1
                 AND NOT EXISTS (SELECT 1 FROM "new" n WHERE n."id" = l."${side.linkCol}") RETURNING l."${side.linkCol}" AS id)
     SELECT 'a' AS op, id FROM "ins" UNION ALL SELECT 'r' AS op, id FROM "del"`,
    [policyId, ...sel.params],
  );
  const delta: SideDelta = { added: [], removed: [] };
  for (const r of rows) (r.op === 'a' ? delta.added : delta.removed).push(r.id);
  return delta;
}

/** Adds (sign 1) or removes (sign -1) the policy's whole contribution: every (a, b) of its current links. */
async function applyFullPairs(sql: Sql, kind: PolicyKind, policyId: string, type: string | undefined, sign: 1 | -1): Promise<void> {
  const k = KINDS[kind];
  const p = k.pair;
  const [la, lb] = [k.sides[p.a], k.sides[p.b]];
  const units = unitCounters(kind, type).map((u) => u * sign);
  const pairs = `SELECT a."${la.linkCol}" AS a, b."${lb.linkCol}" AS b FROM "${la.link}" a JOIN "${lb.link}" b ON b."policy_id" = a."policy_id" WHERE a."policy_id" = $1`;
  await changeCounts(sql, p, pairs, [policyId], units);
}

/**
 * Applies +units to the pairs of `pairsSql` (columns a, b; each pair once), creating missing
 * rows for increments and deleting rows whose counts fell to zero after decrements.
 */
async function changeCounts(sql: Sql, p: PairDef, pairsSql: string, params: unknown[], units: number[]): Promise<void> {
  const cols = p.counters;
  if (units.every((u) => u === 0)) return;
  if (units.every((u) => u >= 0)) {
    await sql.query(
      `INSERT INTO "${p.table}" ("${p.colA}", "${p.colB}", ${cols.map((c) => `"${c}"`).join(', ')})
       SELECT x.a, x.b, ${units.join(', ')} FROM (${pairsSql}) x
       ON CONFLICT ("${p.colA}", "${p.colB}") DO UPDATE SET ${cols.map((c) => `"${c}" = "${p.table}"."${c}" + EXCLUDED."${c}"`).join(', ')}`,
      params,
    );
    return;
  }
  await sql.query(
    `UPDATE "${p.table}" t SET ${cols.map((c, i) => `"${c}" = t."${c}" + (${units[i]})`).join(', ')}
     FROM (${pairsSql}) x WHERE t."${p.colA}" = x.a AND t."${p.colB}" = x.b`,
    params,
  );
  await deleteZeroPairs(sql, p);
}

async function deleteZeroPairs(sql: Sql, p: PairDef, where = 'TRUE', params: unknown[] = []): Promise<void> {
  await sql.query(`DELETE FROM "${p.table}" WHERE ${p.counters.map((c) => `"${c}" <= 0`).join(' AND ')} AND (${where})`, params);
}


/**
 * Evaluates a created or updated policy. `previousType` is the sp type before an update (a type
 * change moves the whole contribution from one counter to the other).
 */
export async function evaluatePolicy(sql: Sql, kind: PolicyKind, policy: PolicyShape, previousType?: string): Promise<PolicyEvaluation> {
  const k = KINDS[kind];
  const p = k.pair;
  const typeChanged = previousType !== undefined && previousType !== policy.type;
  if (typeChanged) await applyFullPairs(sql, kind, policy.id, previousType, -1);
  const sides: SideDelta[] = [];
  for (const [i, side] of k.sides.entries()) sides.push(await syncSide(sql, side, policy.id, policy.selectors[i]));
  const [da, db] = [sides[p.a], sides[p.b]];
  const [la, lb] = [k.sides[p.a], k.sides[p.b]];

  const currentA = await linkedIds(sql, la, policy.id);
  const currentB = await linkedIds(sql, lb, policy.id);
  const addedA = new Set(da.added);
  const addedB = new Set(db.added);
  const keptA = currentA.filter((id) => !addedA.has(id));
  const keptB = currentB.filter((id) => !addedB.has(id));
  const oldB = [...keptB, ...db.removed];

  if (typeChanged) {
    await applyFullPairs(sql, kind, policy.id, policy.type, 1);
  } else {
    const units = unitCounters(kind, policy.type);
    // added pairs: addedA × currentB ∪ keptA × addedB (disjoint in a, so each pair once)
    if (da.added.length > 0 && currentB.length > 0) await changeCounts(sql, p, crossSql(), [da.added, currentB], units);
    if (keptA.length > 0 && db.added.length > 0) await changeCounts(sql, p, crossSql(), [keptA, db.added], units);
    const minus = units.map((u) => -u);
    // removed pairs: removedA × oldB ∪ keptA × removedB
    if (da.removed.length > 0 && oldB.length > 0) await changeCounts(sql, p, crossSql(), [da.removed, oldB], minus);
    if (keptA.length > 0 && db.removed.length > 0) await changeCounts(sql, p, crossSql(), [keptA, db.removed], minus);
  }

  const affected = new Set<string>();
  if (typeChanged) {
    for (const id of currentA) affected.add(id);
    for (const id of da.removed) affected.add(id);
  } else {
    if (currentB.length > 0) da.added.forEach((id) => affected.add(id));
    if (oldB.length > 0) da.removed.forEach((id) => affected.add(id));
    if (db.added.length > 0 || db.removed.length > 0) keptA.forEach((id) => affected.add(id));
  }
  let postureAffected: string[] = [];
  if (kind === 'sp' && (sides[2].added.length > 0 || sides[2].removed.length > 0) && currentB.length > 0) postureAffected = currentA;
  return { sides, affectedA: [...affected], postureAffected };
}

/** Removes a policy's contribution before the policy row is deleted; returns side A ids that had pairs. */
export async function retractPolicy(sql: Sql, kind: PolicyKind, policyId: string, type?: string): Promise<string[]> {
  const k = KINDS[kind];
  await applyFullPairs(sql, kind, policyId, type, -1);
  const hasB = (await linkedIds(sql, k.sides[k.pair.b], policyId)).length > 0;
  return hasB ? linkedIds(sql, k.sides[k.pair.a], policyId) : [];
}

function crossSql(): string {
  return `SELECT a.id AS a, b.id AS b FROM unnest($1::text[]) AS a(id) CROSS JOIN unnest($2::text[]) AS b(id)`;
}

async function linkedIds(sql: Sql, side: SideDef, policyId: string): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(`SELECT "${side.linkCol}" AS id FROM "${side.link}" WHERE "policy_id" = $1`, [policyId]);
  return rows.map((r) => r.id);
}


/**
 * Re-matches one entity (created, or its role attributes changed) against every policy of the
 * kinds it takes part in, and applies the link and pair changes. `attrs` null detaches the entity
 * from every policy (before it is deleted).
 */
export async function evaluateEntity(sql: Sql, entity: EntityType, id: string, attrs: readonly string[] | null): Promise<EntityEvaluation> {
  const affected = new Set<string>();
  for (const [kind, k] of Object.entries(KINDS) as [PolicyKind, KindDef][]) {
    for (const [index, side] of k.sides.entries()) {
      if (side.entity !== entity) continue;
      const { rows } = await sql.query<{ op: string; id: string }>(
        `WITH "new" AS (SELECT p."id" FROM "${k.table}" p WHERE $3 AND role_match(p."${side.rolesCol}", p."semantic", $1, $2::text[])),
           "ins" AS (INSERT INTO "${side.link}" ("policy_id", "${side.linkCol}") SELECT n."id", $1 FROM "new" n
                     ON CONFLICT DO NOTHING RETURNING "policy_id" AS id),
           "del" AS (DELETE FROM "${side.link}" l WHERE l."${side.linkCol}" = $1
                     AND NOT EXISTS (SELECT 1 FROM "new" n WHERE n."id" = l."policy_id") RETURNING l."policy_id" AS id)
         SELECT 'a' AS op, id FROM "ins" UNION ALL SELECT 'r' AS op, id FROM "del"`,
        [id, attrs ?? [], attrs !== null],
      );
      const added = rows.filter((r) => r.op === 'a').map((r) => r.id);
      const removed = rows.filter((r) => r.op === 'r').map((r) => r.id);
      if (added.length === 0 && removed.length === 0) continue;
      const p = k.pair;
      if (index === p.a || index === p.b) {
        const other = k.sides[index === p.a ? p.b : p.a];
        const touched = await entityPairs(sql, kind, index === p.a, id, other, added, 1);
        const untouched = await entityPairs(sql, kind, index === p.a, id, other, removed, -1);
        if (kind === 'sp') {
          if (entity === 'identity' && touched + untouched > 0) affected.add(id);
          if (entity === 'service') (await policyMembers(sql, k.sides[0], [...added, ...removed])).forEach((x) => affected.add(x));
        }
      } else if (kind === 'sp' && entity === 'postureCheck') {
        (await policyMembers(sql, k.sides[0], [...added, ...removed])).forEach((x) => affected.add(x));
      }
    }
  }
  return { affectedIdentities: [...affected] };
}

/**
 * Pairs of one entity with the other side of a set of policies, grouped so each pair is changed
 * once by the number of those policies (per counter). Returns how many pairs were touched.
 */
async function entityPairs(sql: Sql, kind: PolicyKind, entityIsA: boolean, id: string, other: SideDef, policyIds: string[], sign: 1 | -1): Promise<number> {
  if (policyIds.length === 0) return 0;
  const k = KINDS[kind];
  const p = k.pair;
  const counterExprs =
    kind === 'sp'
      ? [`count(*) FILTER (WHERE p."type" <> 'Bind')`, `count(*) FILTER (WHERE p."type" = 'Bind')`]
      : ['count(*)'];
  const grouped = `SELECT o."${other.linkCol}" AS other, ${counterExprs.map((e, i) => `${e}::int AS c${i}`).join(', ')}
    FROM "${other.link}" o JOIN "${k.table}" p ON p."id" = o."policy_id" WHERE o."policy_id" = ANY($2::text[]) GROUP BY o."${other.linkCol}"`;
  const [colSelf, colOther] = entityIsA ? [p.colA, p.colB] : [p.colB, p.colA];
  const cols = p.counters;
  if (sign > 0) {
    const r = await sql.query(
      `INSERT INTO "${p.table}" ("${colSelf}", "${colOther}", ${cols.map((c) => `"${c}"`).join(', ')})
       SELECT $1, g.other, ${cols.map((_, i) => `g.c${i}`).join(', ')} FROM (${grouped}) g
       ON CONFLICT ("${p.colA}", "${p.colB}") DO UPDATE SET ${cols.map((c) => `"${c}" = "${p.table}"."${c}" + EXCLUDED."${c}"`).join(', ')}`,
      [id, policyIds],
    );
    return r.rowCount ?? 0;
  }
  const r = await sql.query(
    `UPDATE "${p.table}" t SET ${cols.map((c, i) => `"${c}" = t."${c}" - g.c${i}`).join(', ')}
     FROM (${grouped}) g WHERE t."${colSelf}" = $1 AND t."${colOther}" = g.other`,
    [id, policyIds],
  );
  await deleteZeroPairs(sql, p, `"${colSelf}" = $1`, [id]);
  return r.rowCount ?? 0;
}

async function policyMembers(sql: Sql, side: SideDef, policyIds: string[]): Promise<string[]> {
  if (policyIds.length === 0) return [];
  const { rows } = await sql.query<{ id: string }>(
    `SELECT DISTINCT "${side.linkCol}" AS id FROM "${side.link}" WHERE "policy_id" = ANY($1::text[])`,
    [policyIds],
  );
  return rows.map((r) => r.id);
}

/**
 * Every pair count derived from the links alone, compared with the stored pairs: the rows that
 * differ (missing, extra or wrong count). Empty when the denormalised tables are consistent.
 */
export async function pairDrift(sql: Sql, kind: PolicyKind): Promise<{ a: string; b: string; stored: number[]; expected: number[] }[]> {
  const k = KINDS[kind];
  const p = k.pair;
  const [la, lb] = [k.sides[p.a], k.sides[p.b]];
  const counterExprs =
    kind === 'sp' ? [`count(*) FILTER (WHERE p."type" <> 'Bind')`, `count(*) FILTER (WHERE p."type" = 'Bind')`] : ['count(*)'];
  const { rows } = await sql.query(
    `WITH "exp" AS (
       SELECT a."${la.linkCol}" AS a, b."${lb.linkCol}" AS b, ${counterExprs.map((e, i) => `${e}::int AS c${i}`).join(', ')}
       FROM "${la.link}" a JOIN "${lb.link}" b ON b."policy_id" = a."policy_id" JOIN "${k.table}" p ON p."id" = a."policy_id"
       GROUP BY 1, 2)
     SELECT coalesce(e.a, s."${p.colA}") AS a, coalesce(e.b, s."${p.colB}") AS b,
            ${p.counters.map((c, i) => `coalesce(s."${c}", 0) AS s${i}, coalesce(e.c${i}, 0) AS e${i}`).join(', ')}
     FROM "exp" e FULL JOIN "${p.table}" s ON s."${p.colA}" = e.a AND s."${p.colB}" = e.b
     WHERE ${p.counters.map((c, i) => `coalesce(s."${c}", 0) <> coalesce(e.c${i}, 0)`).join(' OR ')}`,
  );
  return rows.map((r) => ({
    a: r.a,
    b: r.b,
    stored: p.counters.map((_, i) => Number(r[`s${i}`])),
    expected: p.counters.map((_, i) => Number(r[`e${i}`])),
  }));
}

/**
 * Recomputes every policy link and pair count from the policies' role lists and the entities'
 * attributes, from scratch (a repair tool, and how bulk-seeded data gets its derived tables).
 * Runs inside the caller's transaction; per policy side an indexed selection, per kind one
 * grouped insert of the pairs.
 */
export async function rebuildDerived(sql: Sql): Promise<void> {
  await sql.query(`SET LOCAL work_mem = '256MB'`);
  await sql.query(`SET LOCAL maintenance_work_mem = '512MB'`);
  for (const k of Object.values(KINDS)) {
    for (const side of k.sides) await sql.query(`TRUNCATE "${side.link}"`);
    await sql.query(`TRUNCATE "${k.pair.table}"`);
  }
  for (const [kind, k] of Object.entries(KINDS) as [PolicyKind, KindDef][]) {
    const { rows } = await sql.query(`SELECT * FROM "${k.table}"`);
    for (const p of rows) {
      for (const side of k.sides) {
        const roles = p[side.rolesCol] as string[];
        const s: Selector = { ids: [], attrs: [], all: false, semantic: p.semantic };
        for (const r of roles) {
          if (r === '#all') s.all = true;
          else if (r.startsWith('#')) s.attrs.push(r.slice(1));
          else if (r.startsWith('@')) s.ids.push(r.slice(1));
        }
        const sel = selectorSql(side.entity, s, 2);
        await sql.query(`INSERT INTO "${side.link}" ("policy_id", "${side.linkCol}") SELECT $1, x."id" FROM (${sel.sql}) x`, [p.id, ...sel.params]);
      }
    }
    // Bulk load: the secondary indexes are rebuilt after the rows, inserted in primary key order.
    const pr = k.pair;
    const secondary = await sql.query<{ name: string; def: string }>(
      `SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1 AND indexname NOT LIKE '%_pkey'`,
      [pr.table],
    );
    for (const ix of secondary.rows) await sql.query(`DROP INDEX "${ix.name}"`);
    const [la, lb] = [k.sides[pr.a], k.sides[pr.b]];
    const counterExprs =
      kind === 'sp' ? [`count(*) FILTER (WHERE p."type" <> 'Bind')`, `count(*) FILTER (WHERE p."type" = 'Bind')`] : ['count(*)'];
    await sql.query(
      `INSERT INTO "${pr.table}" ("${pr.colA}", "${pr.colB}", ${pr.counters.map((c) => `"${c}"`).join(', ')})
       SELECT a."${la.linkCol}", b."${lb.linkCol}", ${counterExprs.join(', ')}
       FROM "${la.link}" a JOIN "${lb.link}" b ON b."policy_id" = a."policy_id" JOIN "${k.table}" p ON p."id" = a."policy_id"
       GROUP BY 1, 2 ORDER BY 1, 2`,
    );
    for (const ix of secondary.rows) await sql.query(ix.def);
  }
}
