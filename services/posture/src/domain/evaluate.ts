import { type PostureCheck, type PostureCheckData, NO_TIMEOUT } from './model.js';
import { type ApiSessionData, type PostureData, cleanHex, processByPath } from './posture-data.js';
import { parseRange, parseVersion } from './semver-range.js';

/**
 * Posture check evaluation (reference §6.11), as the controller's `posture_check_model_*.go`:
 * pure functions of a check, an identity's posture data, the API session and the time.
 */

/** How long after waking or unlocking an endpoint may still pass MFA before re-prompting (5 min). */
export const MFA_PROMPT_GRACE_MS = 5 * 60_000;
/** C SDKs older than this do not support MFA re-prompts ("legacy endpoints"). */
const MIN_C_SDK = parseVersion('0.25.0');

export interface CheckResult {
  passing: boolean;
  /** Seconds; -1 = no timeout. */
  timeout: number;
  timeoutRemaining: number;
}

function evaluateOs(check: Extract<PostureCheckData, { typeId: 'OS' }>, pd: PostureData): boolean {
  if (!pd.os) return false;
  // The last declaration of an OS type wins; unparsable ranges are skipped (as blang errors are logged).
  const valid = new Map<string, ((v: never) => boolean)[]>();
  for (const os of check.operatingSystems) {
    const ranges: ((v: never) => boolean)[] = [];
    for (const text of os.versions) {
      try {
        ranges.push(parseRange(text) as (v: never) => boolean);
      } catch {
        // skipped
      }
    }
    valid.set(os.type.toLowerCase(), ranges);
  }
  const ranges = valid.get(pd.os.type.toLowerCase());
  if (!ranges) return false;
  if (ranges.length === 0) return true;
  const version = parseVersion(pd.os.version);
  if (version instanceof Error) return false;
  return ranges.some((r) => r(version as never));
}

function evaluateProcess(check: Extract<PostureCheckData, { typeId: 'PROCESS' }>, checkId: string, pd: PostureData): boolean {
  const reported = pd.processes.find((p) => p.postureCheckId === checkId);
  if (!reported || !reported.isRunning) return false;
  const spec = check.process;
  if (spec.signerFingerprint && !reported.signerFingerprints.some((f) => f === cleanHex(spec.signerFingerprint!))) return false;
  if (spec.hashes.length > 0) return spec.hashes.some((h) => cleanHex(h) === reported.hash);
  return true;
}

function processMatches(spec: { hashes: string[]; signerFingerprints: string[] }, reported: { isRunning: boolean; hash: string; signerFingerprints: string[] }): boolean {
  if (!reported.isRunning) return false;
  if (spec.hashes.length > 0 && !spec.hashes.some((h) => cleanHex(h) === reported.hash)) return false;
  if (spec.signerFingerprints.length > 0) {
    const valid = new Set(spec.signerFingerprints.map(cleanHex));
    if (!reported.signerFingerprints.some((f) => valid.has(f))) return false;
  }
  return true;
}

function evaluateProcessMulti(check: Extract<PostureCheckData, { typeId: 'PROCESS_MULTI' }>, pd: PostureData): boolean {
  if (check.semantic === 'AllOf') {
    return check.processes.every((spec) => {
      const reported = spec.path ? processByPath(pd, spec.path) : undefined;
      return !!reported && processMatches(spec, reported);
    });
  }
  return check.processes.some((spec) => {
    const reported = spec.path ? processByPath(pd, spec.path) : undefined;
    return !!reported && processMatches(spec, reported);
  });
}

type MfaCheck = Extract<PostureCheckData, { typeId: 'MFA' }>;

const ms = (at: string | undefined) => (at ? Date.parse(at) : undefined);

/** Whether a wake (or unlock) event is satisfied: none since MFA, or still within the grace period. */
function promptSatisfied(prompt: boolean, eventAt: string | undefined, passedAt: number, now: number): boolean {
  if (!prompt) return true;
  const event = ms(eventAt);
  return event === undefined || event < passedAt || now - MFA_PROMPT_GRACE_MS < event;
}

export function passedOnWake(check: MfaCheck, s: ApiSessionData | undefined, now: number): boolean {
  if (!check.promptOnWake) return true;
  const passed = ms(s?.mfaPassedAt);
  return passed !== undefined && promptSatisfied(true, s?.wokenAt, passed, now);
}

export function passedOnUnlock(check: MfaCheck, s: ApiSessionData | undefined, now: number): boolean {
  if (!check.promptOnUnlock) return true;
  const passed = ms(s?.mfaPassedAt);
  return passed !== undefined && promptSatisfied(true, s?.unlockedAt, passed, now);
}

export function hasMfaTimeout(check: MfaCheck): boolean {
  return check.timeoutSeconds > 0;
}

export function mfaTimedOut(check: MfaCheck, s: ApiSessionData | undefined, now: number): boolean {
  const passed = ms(s?.mfaPassedAt);
  return passed !== undefined && hasMfaTimeout(check) && passed + check.timeoutSeconds * 1000 < now;
}

function evaluateMfa(check: MfaCheck, s: ApiSessionData | undefined, now: number): boolean {
  if (ms(s?.mfaPassedAt) === undefined) return false;
  if (mfaTimedOut(check, s, now)) return false;
  return passedOnWake(check, s, now) && passedOnUnlock(check, s, now);
}

/** The controller's IsLegacyClient: unknown SDKs and C SDKs before 0.25.0 are legacy. */
function isLegacyClient(s: ApiSessionData): boolean {
  const info = s.sdkInfo;
  if (!info) return true;
  if (info.type === 'ziti-sdk-c') {
    const v = parseVersion(info.version ?? '');
    if (!(v instanceof Error) && !(MIN_C_SDK instanceof Error)) return v.compare(MIN_C_SDK) < 0;
  }
  return true;
}

/** Seconds left before the MFA check times out (or a wake/unlock re-prompt lapses); -1 = none. */
export function mfaTimeoutRemaining(check: MfaCheck, s: ApiSessionData | undefined, now: number): number {
  if (!hasMfaTimeout(check)) return NO_TIMEOUT;
  const passed = ms(s?.mfaPassedAt);
  if (!s || passed === undefined) return 0;
  if (check.ignoreLegacyEndpoints && isLegacyClient(s)) return NO_TIMEOUT;
  let remaining = check.timeoutSeconds - Math.trunc((now - passed) / 1000);
  if (remaining <= 0) return 0;
  for (const [prompt, eventAt] of [
    [check.promptOnWake, s.wokenAt],
    [check.promptOnUnlock, s.unlockedAt],
  ] as const) {
    const event = ms(eventAt);
    if (prompt && event !== undefined && event > passed) {
      const left = Math.max(0, Math.trunc((MFA_PROMPT_GRACE_MS - (now - event)) / 1000));
      if (left < remaining) remaining = left;
    }
  }
  return remaining;
}

/** Evaluates one check for an API session of the identity whose posture data is `pd`. */
export function evaluateCheck(check: PostureCheck, pd: PostureData, apiSessionId: string, now: Date): CheckResult {
  const t = now.getTime();
  const d = check.data;
  switch (d.typeId) {
    case 'OS':
      return { passing: evaluateOs(d, pd), timeout: NO_TIMEOUT, timeoutRemaining: NO_TIMEOUT };
    case 'DOMAIN': {
      const reported = pd.domain?.domain.toLowerCase();
      const passing = reported !== undefined && d.domains.some((x) => x.toLowerCase() === reported);
      return { passing, timeout: NO_TIMEOUT, timeoutRemaining: NO_TIMEOUT };
    }
    case 'MAC': {
      const reported = new Set((pd.mac?.addresses ?? []).map(cleanHex));
      const passing = d.macAddresses.some((m) => reported.has(cleanHex(m)));
      return { passing, timeout: NO_TIMEOUT, timeoutRemaining: NO_TIMEOUT };
    }
    case 'PROCESS':
      return { passing: evaluateProcess(d, check.id, pd), timeout: NO_TIMEOUT, timeoutRemaining: NO_TIMEOUT };
    case 'PROCESS_MULTI':
      return { passing: evaluateProcessMulti(d, pd), timeout: NO_TIMEOUT, timeoutRemaining: NO_TIMEOUT };
    case 'MFA': {
      const s = pd.apiSessions[apiSessionId];
      return {
        passing: evaluateMfa(d, s, t),
        timeout: hasMfaTimeout(d) ? d.timeoutSeconds : NO_TIMEOUT,
        timeoutRemaining: mfaTimeoutRemaining(d, s, t),
      };
    }
  }
}
