import { randomUUID } from 'node:crypto';
import { ApiError, formatTimestamp } from '@ziti/errors';
import type { Cache } from '@ziti/messaging';
import type { IntegrityFindings } from '@ziti/proto';
import type { UpstreamOwner } from '../service.js';
import { type IntegrityPeer, PeerError } from './peers.js';
import {
  type IntegrityDocument,
  LEASE_KEY,
  LEASE_RENEW_MS,
  LEASE_TTL_SECONDS,
  RESULTS_KEY,
  RESULTS_TTL_SECONDS,
  addResults,
  newDocument,
  parseDocument,
  renderResults,
  room,
} from './state.js';

/** References one context keeps to another's entities, checked in this order. */
export const REFERENCES: readonly { holder: UpstreamOwner; kind: string; owner: UpstreamOwner }[] = [
  { holder: 'session', kind: 'api-session', owner: 'identity-auth' },
  { holder: 'session', kind: 'identity', owner: 'identity-auth' },
  { holder: 'session', kind: 'service', owner: 'policy' },
  { holder: 'pki-enrollment', kind: 'identity', owner: 'identity-auth' },
  { holder: 'pki-enrollment', kind: 'api-session', owner: 'identity-auth' },
  { holder: 'pki-enrollment', kind: 'router', owner: 'policy' },
  { holder: 'identity-auth', kind: 'ca', owner: 'pki-enrollment' },
  { holder: 'policy', kind: 'identity', owner: 'identity-auth' },
];

/** Projections one context keeps of another's entities. */
export const PROJECTIONS: readonly { kind: 'identity' | 'posture-check'; source: UpstreamOwner; holder: UpstreamOwner }[] = [
  { kind: 'identity', source: 'identity-auth', holder: 'policy' },
  { kind: 'posture-check', source: 'posture', holder: 'policy' },
];

const CONTEXTS: readonly UpstreamOwner[] = ['identity-auth', 'pki-enrollment', 'policy', 'session', 'posture'];
const PAGE = 500;

export interface IntegrityRunnerOptions {
  cache: Cache;
  /** The contexts' IntegrityService clients; a context missing here is left out of the run. */
  peers: Partial<Record<UpstreamOwner, IntegrityPeer>>;
  /** Takes a database snapshot before a fix; without it (or when it fails) a fix repairs nothing. */
  takeSnapshot?: () => Promise<unknown>;
  /** Called after each step's results are stored (progress instrumentation; tests hold a run here). */
  stepHook?: (step: string) => Promise<void>;
  log: (m: string) => void;
}

/** Thrown inside a run when its lease was lost (another run owns the results now). */
class LeaseLost extends Error {}

/** Thrown inside a run when the gateway stops. */
class Stopped extends Error {}

/**
 * The data integrity check of reference §6.14, orchestrated by the gateway over every context's
 * `IntegrityService`. One run at a time across all replicas: a lease in the shared cache
 * (`setIfAbsent` with a TTL the running replica renews); the results document lives beside it, so
 * any replica answers `/database/data-integrity-results`, also while a run is in progress.
 */
export class IntegrityRunner {
  private current: Promise<void> | null = null;
  private stopping = false;

  constructor(private readonly opts: IntegrityRunnerOptions) {}

  /** Starts a run in the background; 429 RATE_LIMITED while one runs (on any replica). */
  async start(fix: boolean): Promise<void> {
    if (this.stopping) throw ApiError.of('RATE_LIMITED');
    const runId = randomUUID();
    if (!(await this.opts.cache.setIfAbsent(LEASE_KEY, runId, LEASE_TTL_SECONDS))) throw ApiError.of('RATE_LIMITED');
    const doc = newDocument(runId, fix, new Date());
    try {
      await this.save(doc);
    } catch (err) {
      await this.release(runId);
      throw err;
    }
    const run = this.run(doc).finally(() => {
      if (this.current === run) this.current = null;
    });
    this.current = run;
  }

  /** The results envelope of the latest run (any replica's). */
  async results() {
    const [raw, lease] = await Promise.all([this.opts.cache.get(RESULTS_KEY), this.opts.cache.get(LEASE_KEY)]);
    return renderResults(parseDocument(raw), lease);
  }

  /** Ends this replica's run at its next step (recorded as stopped) and waits for it. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.current;
  }

  private async run(doc: IntegrityDocument): Promise<void> {
    let lost = false;
    const renew = setInterval(() => {
      this.opts.cache.get(LEASE_KEY).then(
        (holder) => {
          if (holder !== doc.runId) lost = true;
          else return this.opts.cache.set(LEASE_KEY, doc.runId, LEASE_TTL_SECONDS);
        },
        (err: Error) => this.opts.log(`integrity: renewing the lease failed: ${err.message}`),
      );
    }, LEASE_RENEW_MS);
    renew.unref();
    const step = async (name: string, results?: IntegrityFindings) => {
      if (lost) throw new LeaseLost(name);
      if (results) addResults(doc, results.results, results.tooMany);
      await this.save(doc);
      if (this.stopping) throw new Stopped('the gateway stopped during the run');
      await this.opts.stepHook?.(name);
    };
    try {
      if (doc.fixingErrors) await this.snapshot(doc);
      if (doc.error === null) await this.steps(doc, step);
    } catch (err) {
      if (err instanceof LeaseLost) {
        this.opts.log(`integrity: run ${doc.runId} lost its lease at step ${err.message}; its results are no longer recorded`);
        clearInterval(renew);
        return;
      }
      doc.error = (err as Error).message;
    }
    clearInterval(renew);
    doc.inProgress = false;
    doc.endTime = formatTimestamp(new Date());
    if (!lost) await this.save(doc).catch((err: Error) => this.opts.log(`integrity: storing the results failed: ${err.message}`));
    await this.release(doc.runId);
    this.opts.log(`integrity: ${doc.fixingErrors ? 'fix' : 'check'} ${doc.runId} ended: ${doc.results.length} results${doc.error ? `, error: ${doc.error}` : ''}`);
  }

  private async snapshot(doc: IntegrityDocument): Promise<void> {
    if (!this.opts.takeSnapshot) {
      doc.error = 'no database snapshot can be taken (none is configured), so nothing was repaired';
      return;
    }
    try {
      await this.opts.takeSnapshot();
    } catch (err) {
      doc.error = `the database snapshot failed, so nothing was repaired: ${(err as Error).message}`;
    }
  }

  private async steps(doc: IntegrityDocument, step: (name: string, results?: IntegrityFindings) => Promise<void>): Promise<void> {
    const { peers } = this.opts;
    const fix = doc.fixingErrors;
    const failed = (what: string, err: unknown) => {
      if (err instanceof LeaseLost || err instanceof Stopped) throw err;
      if (err instanceof PeerError && err.unimplemented) return;
      const message = `${what}: ${(err as Error).message}`;
      this.opts.log(`integrity: ${message}`);
      doc.error ??= message;
    };

    for (const ctx of CONTEXTS) {
      const peer = peers[ctx];
      if (!peer) continue;
      try {
        await step(`own:${ctx}`, await peer.checkIntegrity({ fix, limit: room(doc) }));
      } catch (err) {
        failed(ctx, err);
      }
    }

    for (const p of PROJECTIONS) {
      const source = peers[p.source];
      const holder = peers[p.holder];
      if (!source || !holder) continue;
      try {
        let after = '';
        for (;;) {
          const asOf = formatTimestamp(new Date());
          const page = await source.listProjectionSources({ kind: p.kind, after, limit: PAGE });
          const items = p.kind === 'identity' ? page.identities : page.postureChecks;
          const ids = p.kind === 'identity' ? page.identities.map((i) => i.identityId) : page.postureChecks.map((c) => c.postureCheckId);
          const until = ids.length < PAGE ? '' : ids[ids.length - 1]!;
          const found = await holder.checkProjection({
            kind: p.kind,
            after,
            until,
            identities: p.kind === 'identity' ? page.identities : [],
            postureChecks: p.kind === 'posture-check' ? page.postureChecks : [],
            asOf,
            fix,
            limit: room(doc),
          });
          await step(`projection:${p.kind}:${items.length}`, found);
          if (until === '') break;
          after = until;
        }
      } catch (err) {
        failed(`${p.holder} ${p.kind} projection`, err);
      }
    }

    for (const r of REFERENCES) {
      const holder = peers[r.holder];
      const owner = peers[r.owner];
      if (!holder || !owner) continue;
      try {
        let after = '';
        for (;;) {
          const { ids } = await holder.listReferences({ kind: r.kind, after, limit: PAGE });
          if (ids.length === 0) break;
          const existing = new Set((await owner.existingIds({ kind: r.kind, ids })).ids);
          const gone = ids.filter((id) => !existing.has(id));
          if (gone.length > 0) await step(`references:${r.holder}:${r.kind}`, await holder.repairReferences({ kind: r.kind, ids: gone, fix, limit: room(doc) }));
          if (ids.length < PAGE) break;
          after = ids[ids.length - 1]!;
        }
      } catch (err) {
        failed(`${r.holder} references to ${r.kind}`, err);
      }
    }
  }

  private save(doc: IntegrityDocument): Promise<void> {
    return this.opts.cache.set(RESULTS_KEY, JSON.stringify(doc), RESULTS_TTL_SECONDS);
  }

  private async release(runId: string): Promise<void> {
    try {
      if ((await this.opts.cache.get(LEASE_KEY)) === runId) await this.opts.cache.del(LEASE_KEY);
    } catch (err) {
      this.opts.log(`integrity: releasing the lease failed (it expires in ${LEASE_TTL_SECONDS} s): ${(err as Error).message}`);
    }
  }
}
