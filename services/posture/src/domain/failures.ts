import { hasMfaTimeout, mfaTimedOut, mfaTimeoutRemaining, passedOnUnlock, passedOnWake } from './evaluate.js';
import { type PostureCheck, NO_TIMEOUT } from './model.js';
import { type PostureData, processByPath } from './posture-data.js';

/**
 * What a failing check expected and what the posture data held, as the failed-service-requests
 * view shows it (`postureCheckFailure<Kind>` of the spec), and the extra `postureQuery` fields of
 * a check in the client service list.
 */

/** go-openapi renders a zero time as this; used where the spec requires a date-time that is unset. */
export const ZERO_TIME = '0001-01-01T00:00:00.000Z';

const iso = (at: string | undefined) => (at ? new Date(at).toISOString() : ZERO_TIME);

function processActual(p: { hash: string; isRunning: boolean; signerFingerprints: string[]; path?: string } | undefined) {
  return p
    ? { hash: p.hash, isRunning: p.isRunning, signerFingerprints: p.signerFingerprints, ...(p.path ? { path: p.path } : {}) }
    : { hash: '', isRunning: false, signerFingerprints: [] };
}

/** A `postureCheckFailure<Kind>` for one check, from the posture data at the moment of refusal. */
export function failureOf(check: PostureCheck, pd: PostureData, apiSessionId: string, now: Date): Record<string, unknown> {
  const base = { postureCheckId: check.id, postureCheckName: check.name, postureCheckType: check.data.typeId };
  const d = check.data;
  switch (d.typeId) {
    case 'OS':
      return {
        ...base,
        actualValue: { type: pd.os?.type ?? '', version: pd.os?.version ?? '' },
        expectedValue: d.operatingSystems.map((o) => ({ type: o.type, versions: o.versions })),
      };
    case 'DOMAIN':
      return { ...base, actualValue: pd.domain?.domain ?? '', expectedValue: d.domains };
    case 'MAC':
      return { ...base, actualValue: pd.mac?.addresses ?? [], expectedValue: d.macAddresses };
    case 'PROCESS':
      return {
        ...base,
        actualValue: processActual(pd.processes.find((p) => p.postureCheckId === check.id)),
        expectedValue: {
          osType: d.process.osType,
          path: d.process.path,
          hashes: d.process.hashes,
          ...(d.process.signerFingerprint ? { signerFingerprint: d.process.signerFingerprint } : {}),
        },
      };
    case 'PROCESS_MULTI':
      return {
        ...base,
        semantic: d.semantic,
        actualValue: d.processes.flatMap((spec) => {
          const reported = spec.path ? processByPath(pd, spec.path) : undefined;
          return reported ? [processActual(reported)] : [];
        }),
        expectedValue: d.processes,
      };
    case 'MFA': {
      const s = pd.apiSessions[apiSessionId];
      const t = now.getTime();
      return {
        ...base,
        actualValue: {
          passedMfa: !!s?.mfaPassedAt,
          passedOnUnlock: passedOnUnlock(d, s, t),
          passedOnWake: passedOnWake(d, s, t),
          timedOut: s?.mfaPassedAt ? mfaTimedOut(d, s, t) : true,
        },
        expectedValue: { passedMfa: true, passedOnUnlock: d.promptOnUnlock, passedOnWake: d.promptOnWake, timedOut: false },
        criteria: {
          passedMfaAt: iso(s?.mfaPassedAt),
          wokenAt: iso(s?.wokenAt),
          unlockedAt: iso(s?.unlockedAt),
          timeoutSeconds: hasMfaTimeout(d) ? d.timeoutSeconds : NO_TIMEOUT,
          timeoutRemainingSeconds: s?.mfaPassedAt ? mfaTimeoutRemaining(d, s, t) : 0,
        },
      };
    }
  }
}

/**
 * The `postureQuery` fields of a check beyond id, queryType, isPassing, timeout and
 * timeoutRemaining: the base entity fields and the kind's extras.
 */
export function queryExtras(check: PostureCheck, pd: PostureData, apiSessionId: string): Record<string, unknown> {
  const out: Record<string, unknown> = {
    _links: { self: { href: `./posture-checks/${check.id}` } },
    createdAt: check.createdAt.toISOString(),
    updatedAt: check.updatedAt.toISOString(),
    tags: check.tags,
  };
  const d = check.data;
  if (d.typeId === 'PROCESS') out.process = { osType: d.process.osType, path: d.process.path };
  if (d.typeId === 'PROCESS_MULTI') out.processes = d.processes.map((p) => ({ osType: p.osType, path: p.path }));
  if (d.typeId === 'MFA') {
    out.promptOnWake = d.promptOnWake;
    out.promptOnUnlock = d.promptOnUnlock;
    const passed = pd.apiSessions[apiSessionId]?.mfaPassedAt;
    if (hasMfaTimeout(d) && passed) out.timeoutAt = new Date(Date.parse(passed) + d.timeoutSeconds * 1000).toISOString();
  }
  return out;
}
