import { ApiError } from '@ziti/errors';
import { cuid } from './cuid.js';
import type { Caller, ListRequest, Page, PostureCheckResult, Session, SessionType } from './model.js';
import { checksToEvaluate, decidePosture } from './posture-decision.js';
import type { PolicyPort, PosturePort, SessionStore, TokenSigner } from './ports.js';

const YEAR_SECONDS = 365 * 24 * 3600;

/** The claims of a session token (§6.4): a service access token of a legacy (zt-session) API session. */
export function sessionClaims(s: Pick<Session, 'id' | 'serviceId' | 'apiSessionId' | 'identityId' | 'type'>, issuer: string, now: Date): Record<string, unknown> {
  const iat = Math.floor(now.getTime() / 1000);
  const exp = new Date(now);
  exp.setUTCFullYear(exp.getUTCFullYear() + 1);
  return {
    iss: issuer,
    sub: s.serviceId,
    aud: ['openziti'],
    iat,
    exp: Math.floor(exp.getTime() / 1000) || iat + YEAR_SECONDS,
    jti: s.id,
    z_asid: s.apiSessionId,
    z_iid: s.identityId,
    z_t: 's',
    z_st: s.type,
    z_leg: true,
  };
}

/** A bounded set of recently used keys (insertion order; the oldest go first). */
export class RecentKeys {
  private readonly keys = new Set<string>();
  constructor(private readonly max: number) {}

  has(key: string): boolean {
    return this.keys.has(key);
  }

  add(key: string): void {
    this.keys.delete(key);
    this.keys.add(key);
    if (this.keys.size > this.max) this.keys.delete(this.keys.values().next().value!);
  }
}

export interface CreateSessionInput {
  serviceId?: string;
  type?: string;
  tags?: Record<string, unknown> | null;
}

/**
 * Sessions: creation with the checks of §5.4 in their order, deduplication per (API session,
 * service, type), listing and deletion, and their removal when access is lost.
 */
export class SessionManager {
  /**
   * (API session, service, type) keys this process created or returned a session for. Only a key
   * seen here is looked up before the checks (a repeat is then answered from the store at once); a
   * first create goes straight to the checks and its insert, which still returns the session that
   * another replica (or this one before a restart) created for the same key.
   */
  private readonly recent = new RecentKeys(50_000);

  constructor(
    private readonly store: SessionStore,
    private readonly policy: PolicyPort,
    private readonly posture: PosturePort,
    private readonly signer: TokenSigner,
    private readonly log: (m: string) => void,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * POST /sessions. A repeat for the same API session, service and type returns the existing
   * session (one this process has not seen passes the checks first, then gets the stored one).
   * Otherwise: invisible service → 404; type not permitted → 400 (ServiceId); failing
   * posture → 409 INVALID_POSTURE (the refusal is recorded for failed-service-requests); no edge
   * router shared by the identity's and the service's policies → 400 NO_EDGE_ROUTERS_AVAILABLE.
   * `onCreated` is told the session when this call stored it (not when it returned one again).
   */
  async create(caller: Caller, input: CreateSessionInput, onCreated?: (session: Session) => void): Promise<Session> {
    const type = (input.type ?? 'Dial') as SessionType;
    if (type !== 'Dial' && type !== 'Bind') throw ApiError.field('type', 'type in body should be one of [Dial Bind]', input.type);
    const serviceId = input.serviceId ?? '';
    if (serviceId === '') throw ApiError.notFound();

    const key = `${caller.apiSessionId}\n${serviceId}\n${type}`;
    if (this.recent.has(key)) {
      const existing = await this.store.findExisting(caller.apiSessionId, serviceId, type);
      if (existing) return existing;
    }

    // The token's claims are known before the checks: it is signed while they run, and dropped if they refuse.
    const now = this.now();
    const id = cuid(now.getTime());
    const base = { id, apiSessionId: caller.apiSessionId, identityId: caller.identityId, serviceId, type };
    const token = this.signer.issuer().then((issuer) => this.signer.sign(sessionClaims(base, issuer, now)));
    token.catch(() => undefined); // awaited below only when the checks pass

    const access = await this.policy.serviceAccess(caller.identityId, serviceId);
    if (!access.visible) throw ApiError.notFound();
    if (!access.permissions.includes(type)) throw ApiError.field('ServiceId', 'service not found', serviceId);

    const checkIds = checksToEvaluate(access, type);
    const results: PostureCheckResult[] = checkIds.length > 0 ? await this.posture.evaluate(caller.identityId, caller.apiSessionId, checkIds, caller.mfaCompletedAt) : [];
    const decision = decidePosture(access, type, results);
    if (!decision.passed) {
      await this.posture
        .recordFailure({
          identityId: caller.identityId,
          apiSessionId: caller.apiSessionId,
          serviceId,
          serviceName: access.serviceName,
          sessionType: type,
          policyFailuresJson: JSON.stringify(decision.cause?.data ?? {}),
        })
        .catch((err: unknown) => this.log(`session: recording the failed service request failed: ${(err as Error).message}`));
      throw ApiError.of('INVALID_POSTURE', { cause: decision.cause });
    }
    if (access.edgeRouters.length === 0) throw ApiError.of('NO_EDGE_ROUTERS_AVAILABLE');

    const session = await this.store.insertOrGet({
      ...base,
      token: await token,
      serviceName: access.serviceName,
      tags: input.tags ?? {},
      edgeRouters: access.edgeRouters,
      servicePolicyIds: decision.passingPolicyIds,
      postureCheckIds: checkIds,
      createdAt: now,
      updatedAt: now,
    });
    this.recent.add(key);
    if (session.id === id) onCreated?.(session);
    return session;
  }

  /** Client and management lists: an admin sees every session, others their own. */
  async list(caller: Caller, req: ListRequest): Promise<Page<Session>> {
    return this.store.list(req, caller.isAdmin ? undefined : caller.identityId);
  }

  /** A session of the caller (or, on the management API, any session for an admin). */
  async detail(caller: Caller, id: string, anyForAdmin: boolean): Promise<Session> {
    const s = await this.store.findById(id);
    if (!s || (s.identityId !== caller.identityId && !(anyForAdmin && caller.isAdmin))) throw ApiError.notFound();
    return s;
  }

  async delete(caller: Caller, id: string, anyForAdmin: boolean): Promise<void> {
    await this.detail(caller, id, anyForAdmin);
    if ((await this.store.deleteById(id)).length === 0) throw ApiError.notFound();
  }

  // ---- access lost (event consumers): each is idempotent

  async apiSessionEnded(apiSessionId: string): Promise<number> {
    return (await this.store.deleteByApiSession(apiSessionId)).length;
  }

  async identityGone(identityId: string): Promise<number> {
    return (await this.store.deleteByIdentity(identityId)).length;
  }

  async serviceGone(serviceId: string): Promise<number> {
    return (await this.store.deleteByService(serviceId)).length;
  }

  async serviceAccessLost(identityId: string, serviceId: string, type?: SessionType): Promise<number> {
    return (await this.store.deleteByIdentityAndService(identityId, serviceId, type)).length;
  }

  /**
   * Re-checks every session of these identities against their current access and posture (after
   * their policies or posture data changed) and deletes those no longer allowed. One access lookup
   * per (identity, service); posture per API session. Returns how many sessions ended.
   * `postureOnly` (a posture data change): only the sessions whose creation evaluated posture
   * checks (a policy that gains checks later reports its identities with service-access.changed).
   */
  async revalidateAll(identityIds: readonly string[], postureOnly = false): Promise<number> {
    const sessions = await this.store.ofIdentities(identityIds, postureOnly);
    const access = new Map<string, Promise<Awaited<ReturnType<PolicyPort['serviceAccess']>>>>();
    let deleted = 0;
    for (const s of sessions) {
      const key = `${s.identityId}\n${s.serviceId}`;
      if (!access.has(key)) access.set(key, this.policy.serviceAccess(s.identityId, s.serviceId));
      const a = await access.get(key)!;
      let keep = a.visible && a.permissions.includes(s.type);
      if (keep) {
        const ids = checksToEvaluate(a, s.type);
        const results = ids.length > 0 ? await this.posture.evaluate(s.identityId, s.apiSessionId, ids) : [];
        keep = decidePosture(a, s.type, results).passed;
      }
      if (!keep) deleted += (await this.store.deleteById(s.id)).length;
    }
    return deleted;
  }

  /**
   * The controller's posture timeout enforcement: re-checks, in batches, the sessions created
   * under posture checks (an MFA timeout or re-prompt may have lapsed since) and ends those that no
   * longer pass. One replica at a time. Returns how many sessions ended.
   */
  async sweepPosture(batch = 200): Promise<number> {
    let deleted = 0;
    await this.store.exclusively('posture-sweep', async () => {
      const ids = await this.store.identitiesWithPostureSessions();
      for (let i = 0; i < ids.length; i += batch) deleted += await this.revalidateAll(ids.slice(i, i + batch), true);
    });
    return deleted;
  }
}
