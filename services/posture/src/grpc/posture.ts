import type { ServiceError } from '@grpc/grpc-js';
import { ApiError, toGrpcError } from '@ziti/errors';
import type { PostureServiceServer } from '@ziti/proto';
import type { PolicyFailureInput, PostureManager } from '../domain/posture-manager.js';

/**
 * `policy_failures_json` of RecordFailedServiceRequest: the INVALID_POSTURE cause's `data` map
 * (`{policyId: [{id, typeId, isPassing}]}`) or a list `[{policyId, policyName?, checks: [{id}]}]`.
 */
export function parsePolicyFailures(json: string): PolicyFailureInput[] {
  if (!json) return [];
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    throw ApiError.field('policyFailuresJson', 'not valid JSON', json.slice(0, 100));
  }
  const ids = (checks: unknown) => (Array.isArray(checks) ? checks.flatMap((c) => (typeof (c as { id?: unknown })?.id === 'string' ? [(c as { id: string }).id] : [])) : []);
  if (Array.isArray(v)) {
    return v.map((p) => {
      const o = (p ?? {}) as { policyId?: unknown; policyName?: unknown; checks?: unknown };
      return { policyId: String(o.policyId ?? ''), ...(typeof o.policyName === 'string' ? { policyName: o.policyName } : {}), checkIds: ids(o.checks) };
    });
  }
  if (v && typeof v === 'object') return Object.entries(v as Record<string, unknown>).map(([policyId, checks]) => ({ policyId, checkIds: ids(checks) }));
  return [];
}

/** `ziti.v1.PostureService`: posture evaluation for session create and the client service list. */
export function postureServer(posture: PostureManager): PostureServiceServer {
  return {
    evaluatePostureChecks(call, callback) {
      const r = call.request;
      posture.evaluate(r.identityId, r.apiSessionId, r.postureCheckIds, r.mfaCompletedAt || undefined).then(
        ({ results, anyExist }) =>
          callback(null, {
            anyPostureChecksExist: anyExist,
            results: results.map((x) => ({
              id: x.id,
              name: x.name,
              typeId: x.typeId,
              isPassing: x.isPassing,
              timeout: x.timeout,
              timeoutRemaining: x.timeoutRemaining,
              queryJson: JSON.stringify(x.query),
            })),
          }),
        (err: unknown) => callback(toGrpcError(err) as ServiceError),
      );
    },
    recordFailedServiceRequest(call, callback) {
      const r = call.request;
      Promise.resolve()
        .then(() =>
          posture.recordFailure(r.identityId, {
            apiSessionId: r.apiSessionId,
            serviceId: r.serviceId,
            serviceName: r.serviceName,
            sessionType: r.sessionType || 'Dial',
            policies: parsePolicyFailures(r.policyFailuresJson),
          }),
        )
        .then(
          () => callback(null, {}),
          (err: unknown) => callback(toGrpcError(err) as ServiceError),
        );
    },
  };
}
