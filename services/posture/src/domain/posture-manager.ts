import { formatTimestamp } from '@ziti/errors';
import { evaluateCheck } from './evaluate.js';
import { failureOf, queryExtras } from './failures.js';
import type { PostureCheck } from './model.js';
import { MFA_PROMPT_GRACE_MS } from './evaluate.js';
import { type PostureData, type PostureResponseInput, applyResponses, recordMfa } from './posture-data.js';
import type { PolicyPort, PostureCheckStore, PostureDataEvents, PostureDataStore } from './ports.js';

/** Failed service requests kept per identity (the controller's MaxPostureFailures). */
export const MAX_FAILED_REQUESTS = 100;

export interface CheckEvaluation {
  id: string;
  name: string;
  typeId: string;
  isPassing: boolean;
  timeout: number;
  timeoutRemaining: number;
  query: Record<string, unknown>;
}

/** A failing policy, as the session context reports it: the policy and its failing check ids. */
export interface PolicyFailureInput {
  policyId: string;
  policyName?: string;
  checkIds: string[];
}

/** A service whose MFA timeout changed with a wake or unlock (`postureResponseService`). */
export interface AffectedService {
  id: string;
  name: string;
  postureQueryType: string;
  timeout: number;
  timeoutRemaining: number;
}

/**
 * Posture responses, evaluation and the identity's posture state. MFA state comes from the
 * caller's principal (`mfaCompletedAt`, when identity-auth provides it) and is recorded per API
 * session; everything else from the posture responses the endpoints submit.
 */
export class PostureManager {
  constructor(
    private readonly checks: PostureCheckStore,
    private readonly data: PostureDataStore,
    private readonly policy: PolicyPort,
    private readonly events: PostureDataEvents,
    private readonly log: (m: string) => void,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Applies posture responses of an API session. Answers the services whose MFA timeout changed
   * (a wake or unlock after MFA, with a prompting MFA check). A change that posture evaluation
   * reads publishes `posture-data.changed` (service lists and sessions are re-evaluated).
   */
  async submit(identityId: string, apiSessionId: string, responses: PostureResponseInput[], mfaCompletedAt?: string): Promise<AffectedService[]> {
    const now = this.now();
    const { changed, woken, unlocked, pd } = await this.data.update(identityId, (current) => {
      const applied = applyResponses(current, responses, apiSessionId, now);
      const mfaChanged = recordMfa(applied.data, apiSessionId, mfaCompletedAt, now);
      return { data: applied.data, result: { ...applied, changed: applied.changed || mfaChanged, pd: applied.data } };
    });
    if (changed) await this.events.changed(identityId).catch((err: unknown) => this.log(`posture: posture-data event failed: ${(err as Error).message}`));
    if (!woken && !unlocked) return [];
    return this.affectedServices(identityId, pd.apiSessions[apiSessionId]?.mfaPassedAt, woken, unlocked, now);
  }

  /**
   * The controller's GetEndpointStateChangeAffectedServices: MFA checks prompting on the event
   * whose timeout outlasts the grace period (or have none) make their services' timeout the grace
   * period. Needs MFA to have been passed in this API session.
   */
  private async affectedServices(identityId: string, passedAt: string | undefined, woken: boolean, unlocked: boolean, now: Date): Promise<AffectedService[]> {
    if (!passedAt) return [];
    const sinceMfa = Math.trunc((now.getTime() - Date.parse(passedAt)) / 1000);
    const grace = MFA_PROMPT_GRACE_MS / 1000;
    const timeouts = new Map<string, number>();
    for (const c of await this.checks.mfaPromptChecks()) {
      const d = c.data;
      if (d.typeId !== 'MFA' || !((d.promptOnWake && woken) || (d.promptOnUnlock && unlocked))) continue;
      if (d.timeoutSeconds === -1 || d.timeoutSeconds - sinceMfa > grace) timeouts.set(c.id, d.timeoutSeconds);
    }
    if (timeouts.size === 0) return [];
    const services = await this.policy.servicesOfChecks(identityId, [...timeouts.keys()]).catch((err: unknown) => {
      this.log(`posture: services of MFA checks unavailable: ${(err as Error).message}`);
      return [];
    });
    return services.map((s) => ({
      id: s.id,
      name: s.name,
      postureQueryType: 'MFA',
      timeout: Math.min(...s.checkIds.map((id) => timeouts.get(id) ?? Number.POSITIVE_INFINITY)),
      timeoutRemaining: grace,
    }));
  }

  /** Evaluates posture checks for an API session (ids that do not exist are skipped). */
  async evaluate(identityId: string, apiSessionId: string, checkIds: readonly string[], mfaCompletedAt?: string): Promise<{ results: CheckEvaluation[]; anyExist: boolean }> {
    const [checks, pd] = await Promise.all([
      checkIds.length > 0 ? this.checks.findByIds(checkIds) : Promise.resolve([] as PostureCheck[]),
      this.postureData(identityId, apiSessionId, mfaCompletedAt),
    ]);
    const now = this.now();
    const results = checks.map((c) => {
      const r = evaluateCheck(c, pd, apiSessionId, now);
      return {
        id: c.id,
        name: c.name,
        typeId: c.data.typeId,
        isPassing: r.passing,
        timeout: r.timeout,
        timeoutRemaining: r.timeoutRemaining,
        query: queryExtras(c, pd, apiSessionId),
      };
    });
    return { results, anyExist: results.length > 0 || (await this.checks.any()) };
  }

  /** The identity's data, with the caller's MFA completion recorded when it is news. */
  private async postureData(identityId: string, apiSessionId: string, mfaCompletedAt?: string): Promise<PostureData> {
    const pd = await this.data.get(identityId);
    if (mfaCompletedAt === undefined || !apiSessionId || pd.apiSessions[apiSessionId]?.mfaPassedAt === mfaCompletedAt) return pd;
    return this.data.update(identityId, (current) => {
      const changed = recordMfa(current, apiSessionId, mfaCompletedAt, this.now());
      return { data: changed ? current : null, result: current };
    });
  }

  /** Records a session refusal caused by posture, with each failing check and the data of the moment. */
  async recordFailure(
    identityId: string,
    req: { apiSessionId: string; serviceId: string; serviceName: string; sessionType: string; policies: PolicyFailureInput[] },
  ): Promise<void> {
    const ids = [...new Set(req.policies.flatMap((p) => p.checkIds))];
    const [checks, pd] = await Promise.all([this.checks.findByIds(ids), this.data.get(identityId)]);
    const byId = new Map(checks.map((c) => [c.id, c]));
    const now = this.now();
    const entry = {
      apiSessionId: req.apiSessionId,
      serviceId: req.serviceId,
      serviceName: req.serviceName,
      sessionType: req.sessionType,
      when: formatTimestamp(now),
      policyFailures: req.policies.map((p) => ({
        policyId: p.policyId,
        ...(p.policyName ? { policyName: p.policyName } : {}),
        checks: p.checkIds.flatMap((id) => {
          const c = byId.get(id);
          return c ? [failureOf(c, pd, req.apiSessionId, now)] : [];
        }),
      })),
    };
    await this.data.addFailedRequest(identityId, entry, MAX_FAILED_REQUESTS);
  }

  async failedRequests(identityId: string): Promise<Record<string, unknown>[]> {
    return this.data.failedRequests(identityId);
  }

  async view(identityId: string): Promise<PostureData> {
    return this.data.get(identityId);
  }

  /** An API session ended: its MFA and endpoint state go. */
  async apiSessionEnded(identityId: string, apiSessionId: string): Promise<void> {
    await this.data.update(identityId, (current) => {
      if (!current.apiSessions[apiSessionId]) return { data: null, result: undefined };
      delete current.apiSessions[apiSessionId];
      return { data: current, result: undefined };
    });
  }

  async identityDeleted(identityId: string): Promise<void> {
    await this.data.drop(identityId);
  }
}
