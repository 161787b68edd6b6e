import { ApiError } from '@ziti/errors';
import { type IntegrityHandlers, type IntegritySql, REFERENCE_GRACE_SECONDS, checkOutbox, findingsFor, integrityPageSize } from '@ziti/service-kit';
import type { IntegrityManager } from '../domain/integrity-manager.js';
import { identityChange, postureCheckChange } from './policy.js';

/** The kinds of entities this context owns that others refer to. */
const OWNED = new Set(['service', 'router']);

/**
 * `ziti.v1.IntegrityService` of the policy context: links and pairs, its outbox, the identity and
 * posture check projections (against the sources the gateway hands it), which services and
 * routers exist, and the identities of tunneler-enabled edge routers identity-auth should have.
 */
export function policyIntegrity(manager: IntegrityManager, sql: IntegritySql, flushOutbox: () => Promise<void>): Partial<IntegrityHandlers> {
  return {
    async checkIntegrity(req) {
      const findings = findingsFor(req.limit);
      await manager.checkDerived(req.fix, findings);
      await checkOutbox(sql, 'policy', req.fix, flushOutbox, findings);
      return findings.toMessage();
    },
    async existingIds(req) {
      if (!OWNED.has(req.kind)) throw ApiError.field('kind', `policy owns no ${req.kind}`, req.kind);
      return { ids: await manager.existingIds(req.kind as 'service' | 'router', req.ids) };
    },
    async listReferences(req) {
      if (req.kind !== 'identity') return { ids: [] };
      return { ids: await manager.systemIdentityIds(req.after, integrityPageSize(req.limit), REFERENCE_GRACE_SECONDS) };
    },
    async repairReferences(req) {
      const findings = findingsFor(req.limit);
      if (req.kind === 'identity') await manager.repairRouterIdentities(req.ids, req.fix, findings);
      return findings.toMessage();
    },
    async checkProjection(req) {
      const findings = findingsFor(req.limit);
      const asOf = new Date(req.asOf);
      if (Number.isNaN(asOf.getTime())) throw ApiError.field('asOf', 'asOf must be a timestamp', req.asOf);
      if (req.kind === 'identity') {
        await manager.checkIdentities(req.identities.map(identityChange), req.after, req.until, asOf, req.fix, findings);
      } else if (req.kind === 'posture-check') {
        await manager.checkPostureChecks(req.postureChecks.map(postureCheckChange), req.after, req.until, asOf, req.fix, findings);
      } else {
        throw ApiError.field('kind', `policy keeps no projection of ${req.kind}`, req.kind);
      }
      return findings.toMessage();
    },
  };
}
