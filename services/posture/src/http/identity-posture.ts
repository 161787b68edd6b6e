import { ApiError, dataEnvelope } from '@ziti/errors';
import type { Handler } from '@ziti/http-kit';
import { ZERO_TIME } from '../domain/failures.js';
import type { PostureManager } from '../domain/posture-manager.js';
import type { PostureData } from '../domain/posture-data.js';
import type { IdentityLookup } from '../grpc/identity-client.js';

const iso = (at: string | undefined) => (at ? new Date(at).toISOString() : ZERO_TIME);

/** The `postureData` wire view (every date-time the spec requires is the zero time when unset). */
export function postureDataView(pd: PostureData): Record<string, unknown> {
  const base = (x: { postureCheckId: string; lastUpdatedAt: string } | undefined) => ({
    postureCheckId: x?.postureCheckId ?? '',
    timedOut: false,
    lastUpdatedAt: iso(x?.lastUpdatedAt),
  });
  return {
    apiSessionPostureData: Object.fromEntries(
      Object.entries(pd.apiSessions).map(([id, s]) => {
        const passed = s.mfaPassedAt ? Date.parse(s.mfaPassedAt) : undefined;
        const after = (at: string | undefined) => passed !== undefined && (!at || Date.parse(at) < passed);
        return [
          id,
          {
            mfa: { apiSessionId: id, passedMfa: passed !== undefined, passedAt: iso(s.mfaPassedAt), passedOnWake: after(s.wokenAt), passedOnUnlock: after(s.unlockedAt) },
            endpointState: { wokenAt: iso(s.wokenAt), unlockedAt: iso(s.unlockedAt) },
            ...(s.sdkInfo ? { sdkInfo: s.sdkInfo } : {}),
          },
        ];
      }),
    ),
    domain: { ...base(pd.domain), domain: pd.domain?.domain ?? '' },
    mac: { ...base(pd.mac), addresses: pd.mac?.addresses ?? [] },
    os: { ...base(pd.os), type: pd.os?.type ?? '', version: pd.os?.version ?? '', build: pd.os?.build ?? '' },
    processes: pd.processes.map((p) => ({ ...base(p), isRunning: p.isRunning, binaryHash: p.hash, signerFingerprints: p.signerFingerprints })),
  };
}

/** Management `/identities/{id}/posture-data` and `/identities/{id}/failed-service-requests`. */
export function identityPostureHandlers(posture: PostureManager, identities: IdentityLookup): Record<string, Handler> {
  const known = async (id: string) => {
    if ((await identities.exists(id)) === false) throw ApiError.notFound();
  };
  return {
    async getIdentityPostureData(ctx) {
      await known(ctx.params.id!);
      return { body: dataEnvelope(postureDataView(await posture.view(ctx.params.id!))) };
    },
    async getIdentityFailedServiceRequests(ctx) {
      await known(ctx.params.id!);
      return { body: dataEnvelope(await posture.failedRequests(ctx.params.id!)) };
    },
  };
}
