import { ApiError } from '@ziti/errors';
import { type IntegrityHandlers, type IntegritySql, integrityPageSize, outboxIntegrityCheck } from '@ziti/service-kit';
import type { PostureCheck } from '../domain/model.js';
import { postureCheckDetail } from '../domain/views.js';
import { syncPostureCheckRequest } from './policy-client.js';

/** Reads posture checks by id (the posture check repository). */
export interface PostureCheckReader {
  findByIds(ids: readonly string[]): Promise<PostureCheck[]>;
}

/** `ziti.v1.IntegrityService` of the posture context: its outbox, and the posture checks policy projects. */
export function postureIntegrity(sql: IntegritySql, checks: PostureCheckReader, flushOutbox: () => Promise<void>): Partial<IntegrityHandlers> {
  return {
    ...outboxIntegrityCheck(sql, 'posture', flushOutbox),
    async listProjectionSources(req) {
      if (req.kind !== 'posture-check') throw ApiError.field('kind', `posture is the source of no ${req.kind} projection`, req.kind);
      const { rows } = await sql.query(`SELECT "id" FROM "posture_checks" WHERE "id" COLLATE "C" > $1 ORDER BY "id" COLLATE "C" LIMIT $2`, [req.after, integrityPageSize(req.limit)]);
      const ids = rows.map((r) => r.id as string);
      const found = new Map((await checks.findByIds(ids)).map((c) => [c.id, c]));
      const page = ids.map((id) => found.get(id)).filter((c): c is PostureCheck => c !== undefined);
      return { identities: [], postureChecks: page.map((c) => syncPostureCheckRequest(c, c.id, postureCheckDetail(c))) };
    },
  };
}
