/**
 * The posture data of one identity: what its endpoints reported (OS, domain, MAC addresses,
 * processes) and, per API session, MFA and endpoint state (woken, unlocked). Volatile state, kept
 * in the shared cache (Redis) as one JSON document per identity, bounded (see the limits below).
 */

export interface OsData {
  postureCheckId: string;
  type: string;
  version: string;
  build: string;
  lastUpdatedAt: string;
}

export interface DomainData {
  postureCheckId: string;
  domain: string;
  lastUpdatedAt: string;
}

export interface MacData {
  postureCheckId: string;
  addresses: string[];
  lastUpdatedAt: string;
}

export interface ProcessData {
  postureCheckId: string;
  path: string;
  isRunning: boolean;
  /** Lower-case hex, non-hex characters removed. */
  hash: string;
  signerFingerprints: string[];
  lastUpdatedAt: string;
}

export interface ApiSessionData {
  /** When this API session completed MFA (RFC 3339); absent = never. */
  mfaPassedAt?: string;
  wokenAt?: string;
  unlockedAt?: string;
  sdkInfo?: Record<string, string>;
  /** Last write for this API session, for evicting the oldest when over the bound. */
  touchedAt: string;
}

export interface PostureData {
  os?: OsData;
  domain?: DomainData;
  mac?: MacData;
  processes: ProcessData[];
  apiSessions: Record<string, ApiSessionData>;
}

/** A validated posture response (client `POST /posture-response[-bulk]`). */
export type PostureResponseInput =
  | { typeId: 'OS'; id: string; type: string; version: string; build?: string }
  | { typeId: 'DOMAIN'; id: string; domain: string }
  | { typeId: 'MAC'; id: string; macAddresses: string[] }
  | { typeId: 'PROCESS'; id: string; path?: string; isRunning?: boolean; hash?: string; signerFingerprints?: string[] }
  | { typeId: 'ENDPOINT_STATE'; id: string; woken?: boolean; unlocked?: boolean };

/** Bounds of one identity's posture data. */
export const LIMITS = {
  /** Process entries kept (the least recently updated go first). */
  processes: 100,
  /** API sessions with posture state kept (the least recently written go first). */
  apiSessions: 32,
  /** MAC addresses kept from one response. */
  macAddresses: 64,
  /** Signer fingerprints kept per process. */
  signerFingerprints: 16,
} as const;

export function emptyPostureData(): PostureData {
  return { processes: [], apiSessions: {} };
}

/** The controller's CleanHexString: lower case, every non-hex character removed. */
export function cleanHex(value: string): string {
  return value.toLowerCase().replace(/[^a-f\d]+/g, '');
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

export interface ApplyResult {
  data: PostureData;
  /** Whether anything that posture evaluation reads changed (not just timestamps). */
  changed: boolean;
  woken: boolean;
  unlocked: boolean;
}

function apiSession(pd: PostureData, apiSessionId: string, now: string): ApiSessionData {
  const existing = pd.apiSessions[apiSessionId];
  const entry = existing ?? { touchedAt: now };
  entry.touchedAt = now;
  pd.apiSessions[apiSessionId] = entry;
  return entry;
}

/** Keeps at most LIMITS.apiSessions API sessions and LIMITS.processes processes (newest win). */
export function enforceLimits(pd: PostureData): PostureData {
  const sessions = Object.entries(pd.apiSessions);
  if (sessions.length > LIMITS.apiSessions) {
    sessions.sort(([, a], [, b]) => b.touchedAt.localeCompare(a.touchedAt));
    pd.apiSessions = Object.fromEntries(sessions.slice(0, LIMITS.apiSessions));
  }
  if (pd.processes.length > LIMITS.processes) {
    pd.processes = [...pd.processes].sort((a, b) => b.lastUpdatedAt.localeCompare(a.lastUpdatedAt)).slice(0, LIMITS.processes);
  }
  return pd;
}

/**
 * Applies posture responses of one API session to an identity's posture data (mutating a copy)
 * as the controller's PostureResponse.Apply does: OS, domain and MAC replace the previous values;
 * a process is upserted by (posture check id, path) with its hash and signer fingerprints cleaned;
 * endpoint state stamps `wokenAt` / `unlockedAt` of the API session with `now`.
 */
export function applyResponses(current: PostureData, responses: readonly PostureResponseInput[], apiSessionId: string, now: Date): ApplyResult {
  const pd: PostureData = structuredClone(current);
  const at = now.toISOString();
  let changed = false;
  let woken = false;
  let unlocked = false;
  for (const r of responses) {
    switch (r.typeId) {
      case 'OS': {
        const build = r.build ?? '';
        if (!pd.os || pd.os.type !== r.type || pd.os.version !== r.version || pd.os.build !== build) changed = true;
        pd.os = { postureCheckId: r.id, type: r.type, version: r.version, build, lastUpdatedAt: at };
        break;
      }
      case 'DOMAIN':
        if (!pd.domain || pd.domain.domain !== r.domain) changed = true;
        pd.domain = { postureCheckId: r.id, domain: r.domain, lastUpdatedAt: at };
        break;
      case 'MAC': {
        const addresses = r.macAddresses.slice(0, LIMITS.macAddresses);
        if (!pd.mac || !sameList(pd.mac.addresses, addresses)) changed = true;
        pd.mac = { postureCheckId: r.id, addresses, lastUpdatedAt: at };
        break;
      }
      case 'PROCESS': {
        const entry: ProcessData = {
          postureCheckId: r.id,
          path: r.path ?? '',
          isRunning: r.isRunning ?? false,
          hash: cleanHex(r.hash ?? ''),
          signerFingerprints: (r.signerFingerprints ?? []).slice(0, LIMITS.signerFingerprints).map(cleanHex),
          lastUpdatedAt: at,
        };
        const i = pd.processes.findIndex((p) => p.postureCheckId === entry.postureCheckId && p.path === entry.path);
        const old = i >= 0 ? pd.processes[i]! : undefined;
        if (!old || old.isRunning !== entry.isRunning || old.hash !== entry.hash || !sameList(old.signerFingerprints, entry.signerFingerprints)) {
          changed = true;
        }
        if (i >= 0) pd.processes[i] = entry;
        else pd.processes.push(entry);
        break;
      }
      case 'ENDPOINT_STATE': {
        const s = apiSession(pd, apiSessionId, at);
        if (r.woken) {
          s.wokenAt = at;
          woken = true;
          changed = true;
        }
        if (r.unlocked) {
          s.unlockedAt = at;
          unlocked = true;
          changed = true;
        }
        break;
      }
    }
  }
  return { data: enforceLimits(pd), changed, woken, unlocked };
}

/** Records when an API session completed MFA; returns whether that changed anything. */
export function recordMfa(pd: PostureData, apiSessionId: string, passedAt: string | undefined, now: Date): boolean {
  if (!apiSessionId || passedAt === undefined) return false;
  const existing = pd.apiSessions[apiSessionId];
  if (existing?.mfaPassedAt === passedAt) return false;
  const s = apiSession(pd, apiSessionId, now.toISOString());
  s.mfaPassedAt = passedAt;
  enforceLimits(pd);
  return true;
}

/** The latest process entry reported for a path (PROCESS_MULTI matches processes by path). */
export function processByPath(pd: PostureData, path: string): ProcessData | undefined {
  let best: ProcessData | undefined;
  for (const p of pd.processes) {
    if (p.path === path && (!best || p.lastUpdatedAt > best.lastUpdatedAt)) best = p;
  }
  return best;
}
