import { lockEvaluation, openDatabase } from './store/db.js';
import { pairDrift, rebuildDerived } from './store/evaluation.js';

/**
 * Recomputes every policy link and ref-counted pair from the role lists (one transaction, under
 * the evaluation lock). For data written around the API (bulk seeding) and for repairs.
 */
export async function rebuildDerivedLinks(databaseUrl: string): Promise<void> {
  const db = openDatabase(databaseUrl, () => undefined, 2);
  try {
    await db.tx(async (sql) => {
      await lockEvaluation(sql);
      await rebuildDerived(sql);
    });
  } finally {
    await db.close();
  }
}

/** The pair rows that differ from a recomputation from the links (empty when consistent), per policy kind. */
export async function derivedDrift(databaseUrl: string): Promise<Record<string, number>> {
  const db = openDatabase(databaseUrl, () => undefined, 2);
  try {
    const out: Record<string, number> = {};
    for (const kind of ['sp', 'erp', 'serp'] as const) out[kind] = (await pairDrift(db.pool, kind)).length;
    return out;
  } finally {
    await db.close();
  }
}
