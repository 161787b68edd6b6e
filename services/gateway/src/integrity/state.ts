import { formatTimestamp } from '@ziti/errors';

/** One finding of a run, as `/database/data-integrity-results` lists it. */
export interface IntegrityResult {
  description: string;
  fixed: boolean;
}

/**
 * The results document of the latest run, kept in the shared cache (`integrity:results`) so every
 * gateway replica answers the same. Only the replica holding the lease writes it.
 */
export interface IntegrityDocument {
  runId: string;
  inProgress: boolean;
  fixingErrors: boolean;
  tooManyErrors: boolean;
  startTime: string | null;
  endTime: string | null;
  error: string | null;
  results: IntegrityResult[];
}

/** Cache keys (the cache adds its own prefix). */
export const LEASE_KEY = 'integrity:lease';
export const RESULTS_KEY = 'integrity:results';
/** The lease expires this long after its last renewal: a crashed replica's run blocks no longer. */
export const LEASE_TTL_SECONDS = 30;
/** How often the running replica renews its lease. */
export const LEASE_RENEW_MS = 10_000;
/** How long the results of the last run are kept. */
export const RESULTS_TTL_SECONDS = 30 * 24 * 3600;
/** The most results a run reports (then `tooManyErrors`). */
export const MAX_RESULTS = 1000;

export const EMPTY_DOCUMENT: IntegrityDocument = {
  runId: '',
  inProgress: false,
  fixingErrors: false,
  tooManyErrors: false,
  startTime: null,
  endTime: null,
  error: null,
  results: [],
};

export const DIED_ERROR = 'the run ended unexpectedly: the gateway replica running it stopped';

export function newDocument(runId: string, fix: boolean, now: Date): IntegrityDocument {
  return { ...EMPTY_DOCUMENT, runId, inProgress: true, fixingErrors: fix, startTime: formatTimestamp(now), results: [] };
}

/** Adds findings up to MAX_RESULTS; beyond that (or when a context had more) `tooManyErrors`. */
export function addResults(doc: IntegrityDocument, results: readonly IntegrityResult[], tooMany: boolean): void {
  for (const r of results) {
    if (doc.results.length < MAX_RESULTS) doc.results.push({ description: String(r.description), fixed: r.fixed === true });
    else doc.tooManyErrors = true;
  }
  if (tooMany) doc.tooManyErrors = true;
}

/** Room left for results (at least 1, so a full run still learns whether there were more). */
export function room(doc: IntegrityDocument): number {
  return Math.max(MAX_RESULTS - doc.results.length, 1);
}

/** Parses the stored document; anything unreadable counts as no run. */
export function parseDocument(raw: string | null): IntegrityDocument {
  if (!raw) return { ...EMPTY_DOCUMENT, results: [] };
  try {
    const d = JSON.parse(raw) as Partial<IntegrityDocument>;
    return {
      runId: typeof d.runId === 'string' ? d.runId : '',
      inProgress: d.inProgress === true,
      fixingErrors: d.fixingErrors === true,
      tooManyErrors: d.tooManyErrors === true,
      startTime: typeof d.startTime === 'string' ? d.startTime : null,
      endTime: typeof d.endTime === 'string' ? d.endTime : null,
      error: typeof d.error === 'string' ? d.error : null,
      results: Array.isArray(d.results) ? d.results.filter((r) => r && typeof r.description === 'string').map((r) => ({ description: r.description, fixed: r.fixed === true })) : [],
    };
  } catch {
    return { ...EMPTY_DOCUMENT, results: [] };
  }
}

/**
 * The `dataIntegrityCheckResultEnvelope` of a document. A document that says a run is in progress
 * while the lease names another run (or none) belongs to a run whose replica died: it is shown as
 * ended, with that error.
 */
export function renderResults(doc: IntegrityDocument, leaseHolder: string | null) {
  const died = doc.inProgress && leaseHolder !== doc.runId;
  const data = {
    inProgress: doc.inProgress && !died,
    fixingErrors: doc.fixingErrors,
    tooManyErrors: doc.tooManyErrors,
    startTime: doc.startTime,
    endTime: doc.endTime,
    error: died ? (doc.error ?? DIED_ERROR) : doc.error,
    results: doc.results,
  };
  return { data, meta: { pagination: { limit: -1, offset: 0, totalCount: doc.results.length } } };
}
