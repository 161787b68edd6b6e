import { Client } from 'pg';
import type { EdgeApi } from './clients.js';
import { eventually } from './clients-session.js';
import type { TestController } from './controller.js';
import type { HttpResponse } from './http.js';
import { type SecondGateway, startSecondGateway } from './second-gateway.js';

/**
 * Helpers of the data integrity files: SQL on the test controller's database (to corrupt state as
 * a bug or a crash would), runs through the API polled until they end, and a second gateway
 * replica that takes (recorded) snapshots and can hold a run between its steps.
 */

export interface IntegrityResults {
  inProgress: boolean;
  fixingErrors: boolean;
  tooManyErrors: boolean;
  startTime: string | null;
  endTime: string | null;
  error: string | null;
  results: { description: string; fixed: boolean }[];
}

/** Runs SQL in one context's schema of the test controller's database. */
export async function contextSql(ctl: TestController, schema: string, text: string, params: unknown[] = []): Promise<any[]> {
  const c = new Client({ connectionString: ctl.options.databaseUrl, options: `-c search_path=${schema}` });
  c.on('error', () => undefined);
  await c.connect();
  try {
    return (await c.query(text, params)).rows;
  } finally {
    await c.end();
  }
}

export const results = (api: EdgeApi): Promise<HttpResponse> => api.call('GET', '/database/data-integrity-results');

/** Starts a check (or fix), expects 202, and polls the results until the run ended. */
export async function run(api: EdgeApi, fix = false, reader: EdgeApi = api): Promise<IntegrityResults> {
  const started = await api.call('POST', fix ? '/database/fix-data-integrity' : '/database/check-data-integrity');
  if (started.status !== 202) throw new Error(`starting the ${fix ? 'fix' : 'check'} failed: ${started.status} ${started.text.slice(0, 400)}`);
  return waitForEnd(reader);
}

/** Polls the results until no run is in progress. */
export async function waitForEnd(reader: EdgeApi): Promise<IntegrityResults> {
  const res = await eventually(
    () => results(reader),
    (r) => r.status === 200 && r.body.data.inProgress === false,
    'the integrity run to end',
    60_000,
  );
  return res.body.data as IntegrityResults;
}

/** The descriptions of a run's results that contain every one of `parts`. */
export function findings(r: IntegrityResults, ...parts: string[]): { description: string; fixed: boolean }[] {
  return r.results.filter((x) => parts.every((p) => x.description.includes(p)));
}

/** What the replica's snapshot function does; the tests change it between runs. */
export interface SnapshotControl {
  /** Every snapshot taken, with what `probe` saw at that moment. */
  taken: unknown[];
  /** When set, snapshots fail with this message. */
  failWith: string | null;
  /** Records the state at snapshot time (default nothing). */
  probe: () => Promise<unknown>;
}

export interface IntegrityReplica {
  gateway: SecondGateway;
  snapshot: SnapshotControl;
  /** Holds the next run after the step whose name starts with `step` until `release()`; `reached` resolves when it gets there. */
  holdAfter(step: string): { reached: Promise<void>; release(): void };
}

/** A second gateway replica with every context's gRPC address, a recording snapshot and a step hook. */
export async function startIntegrityReplica(ctl: TestController): Promise<IntegrityReplica> {
  let hold: { step: string; reached: () => void; gate: Promise<void> } | null = null;
  const snapshot: SnapshotControl = { taken: [], failWith: null, probe: async () => null };
  const gateway = await startSecondGateway(ctl, {
    extra: {
      contextGrpc: Object.fromEntries(Object.entries(ctl.running.services).map(([name, s]) => [name, s.grpcAddress])),
      takeSnapshot: async () => {
        if (snapshot.failWith) throw new Error(snapshot.failWith);
        snapshot.taken.push(await snapshot.probe());
      },
      integrityStepHook: async (step) => {
        const h = hold;
        if (!h || !step.startsWith(h.step)) return;
        hold = null;
        h.reached();
        await h.gate;
      },
    },
  });
  return {
    gateway,
    snapshot,
    holdAfter(step: string) {
      let release!: () => void;
      let reached!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const reachedP = new Promise<void>((r) => (reached = r));
      hold = { step, reached, gate };
      return { reached: reachedP, release };
    },
  };
}

/** A past instant for backdating rows (older than every grace period of the check). */
export const LONG_AGO = () => new Date(Date.now() - 5 * 60_000);
