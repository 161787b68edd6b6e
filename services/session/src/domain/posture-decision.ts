import type { ApiErrorCause } from '@ziti/errors';
import type { PostureCheckResult, ServiceAccess, SessionType } from './model.js';

/** The outcome of the posture step of POST /sessions (§5.4 step 3). */
export interface PostureDecision {
  passed: boolean;
  /** Policies of the requested type whose checks all pass. */
  passingPolicyIds: string[];
  /** When refused: the INVALID_POSTURE cause, `{message, data: {policyId: [{id, typeId, isPassing}]}}`. */
  cause?: ApiErrorCause;
}

/** The check ids the posture context must evaluate for a session of `type`. */
export function checksToEvaluate(access: ServiceAccess, type: SessionType): string[] {
  return [...new Set(access.policies.filter((p) => p.policyType === type).flatMap((p) => p.postureCheckIds))];
}

/**
 * The controller's EvaluatePostureForService: among the policies of the requested type, one whose
 * checks all pass admits the session (a policy without checks passes). Checks the posture context
 * did not return no longer exist and do not count. Without any policy of the type, nothing fails.
 */
export function decidePosture(access: ServiceAccess, type: SessionType, results: readonly PostureCheckResult[]): PostureDecision {
  const byId = new Map(results.map((r) => [r.id, r]));
  const policies = access.policies.filter((p) => p.policyType === type);
  const passing: string[] = [];
  const failed = new Map<string, PostureCheckResult[]>();
  for (const p of policies) {
    const failing = p.postureCheckIds.flatMap((id) => {
      const r = byId.get(id);
      return r && !r.isPassing ? [r] : [];
    });
    if (failing.length === 0) passing.push(p.policyId);
    else failed.set(p.policyId, failing);
  }
  if (policies.length === 0 || passing.length > 0) return { passed: true, passingPolicyIds: passing };
  const ids = [...failed.keys()];
  return {
    passed: false,
    passingPolicyIds: [],
    cause: {
      message: `Failed to pass posture checks for service policies: [${ids.join(' ')}]`,
      data: Object.fromEntries(ids.map((id) => [id, failed.get(id)!.map((r) => ({ id: r.id, typeId: r.typeId, isPassing: false }))])),
    },
  };
}
