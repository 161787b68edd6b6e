import { type EdgeRouterRef, PkiEnrollmentServiceClient, PolicyServiceClient, PostureServiceClient, type SessionTokenClaims, type SigningCertificate } from '@ziti/proto';
import type { SessionTokenSource } from './signer.js';
import type { SessionEdgeRouter } from '../domain/model.js';
import type { PolicyPort, PosturePort } from '../domain/ports.js';
import { type Address, type Unary, grpcClient, lazyGrpcClient as lazy } from '@ziti/service-kit';

export type { Address };

function edgeRouter(r: EdgeRouterRef): SessionEdgeRouter {
  return {
    name: r.name,
    hostname: r.hostname,
    isOnline: r.isOnline,
    // `urls` is the deprecated twin of supportedProtocols (the controller fills both from the router's protocols).
    urls: Object.keys(r.urls).length > 0 ? { ...r.urls } : { ...r.supportedProtocols },
    supportedProtocols: { ...r.supportedProtocols },
    syncStatus: r.syncStatus,
    cost: Number(r.cost),
    noTraversal: r.noTraversal,
    disabled: r.disabled,
  };
}

/** `PolicyService.GetServiceAccess`. */
export function grpcPolicyPort(address: Address | undefined): PolicyPort & { close(): void } {
  const c = lazy('policy', address, (a) => grpcClient(PolicyServiceClient, a, 'session'));
  return {
    async serviceAccess(identityId, serviceId) {
      const r = await c.call((x) => x.getServiceAccess as unknown as Unary<{ identityId: string; serviceId: string; withoutLiveState: boolean }, import('@ziti/proto').ServiceAccess>, { identityId, serviceId, withoutLiveState: false });
      return {
        visible: r.visible,
        serviceName: r.serviceName,
        permissions: r.permissions,
        policies: r.policies.map((p) => ({ policyId: p.policyId, policyType: p.policyType, postureCheckIds: p.postureCheckIds })),
        edgeRouters: r.edgeRouters.map(edgeRouter),
      };
    },
    close: c.close,
  };
}

/** `PostureService.EvaluatePostureChecks` and `RecordFailedServiceRequest`. */
export function grpcPosturePort(address: Address | undefined): PosturePort & { close(): void } {
  const c = lazy('posture', address, (a) => grpcClient(PostureServiceClient, a, 'session'));
  return {
    async evaluate(identityId, apiSessionId, checkIds, mfaCompletedAt) {
      const r = await c.call(
        (x) => x.evaluatePostureChecks as unknown as Unary<import('@ziti/proto').EvaluatePostureChecksRequest, import('@ziti/proto').EvaluatePostureChecksResponse>,
        { identityId, apiSessionId, postureCheckIds: [...checkIds], mfaCompletedAt: mfaCompletedAt ?? '' },
      );
      return r.results.map((x) => ({ id: x.id, typeId: x.typeId, isPassing: x.isPassing }));
    },
    async recordFailure(req) {
      await c.call((x) => x.recordFailedServiceRequest as unknown as Unary<typeof req, unknown>, req);
    },
    close: c.close,
  };
}

/** `PkiEnrollmentService.SignSessionTokens` and `GetSigningCertificate`. */
export function grpcSessionTokenSource(address: Address | undefined): SessionTokenSource & { close(): void } {
  const c = lazy('pki-enrollment', address, (a) => grpcClient(PkiEnrollmentServiceClient, a, 'session'));
  return {
    async sign(tokens) {
      const r = await c.call((x) => x.signSessionTokens as unknown as Unary<{ tokens: SessionTokenClaims[] }, { tokens: string[] }>, { tokens });
      return r.tokens;
    },
    signingCertificate() {
      return c.call((x) => x.getSigningCertificate as unknown as Unary<Record<string, never>, SigningCertificate>, {});
    },
    close: c.close,
  };
}
