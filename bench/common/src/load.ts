/** Figures of one timed phase: successes, failures, wall time and each success's latency. */
export interface Phase {
  count: number;
  errors: number;
  seconds: number;
  latenciesMs: number[];
}

/** Runs `op` in `concurrency` loops for `ms`; counts successes and records their latencies. */
export async function run(ms: number, concurrency: number, op: (lane: number) => Promise<boolean>): Promise<Phase> {
  const latenciesMs: number[] = [];
  let errors = 0;
  const start = performance.now();
  const end = start + ms;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, lane) => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const ok = await op(lane).catch(() => false);
        if (ok) latenciesMs.push(performance.now() - t0);
        else errors++;
      }
    }),
  );
  return { count: latenciesMs.length, errors, seconds: (performance.now() - start) / 1000, latenciesMs };
}

export const rate = (p: Phase): number => p.count / p.seconds;

/** p-th percentile (nearest rank). */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Runs `fn` over `items` with at most `concurrency` calls in flight. */
export async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

/** Deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Polls `probe` every 50 ms until it is truthy or `ms` passed. */
export async function until<T>(probe: () => Promise<T> | T, what: string, ms = 15_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Open-loop load: starts `op` `perSecond` times a second for `ms`, whatever is still in flight
 * (a request is not held back by slow answers, as a closed loop would be). Each latency runs from
 * the moment the request was due, so a late start (the generator behind) counts against it.
 * `seconds` runs until the last answer (a backlog makes it longer than `ms`).
 */
export async function runAtRate(ms: number, perSecond: number, op: (k: number) => Promise<boolean>): Promise<Phase & { issued: number }> {
  const latenciesMs: number[] = [];
  let errors = 0;
  let issued = 0;
  const pending: Promise<void>[] = [];
  const start = performance.now();
  for (;;) {
    const elapsed = performance.now() - start;
    if (elapsed >= ms) break;
    // Request k is due at k / perSecond seconds: the first at once.
    const due = Math.min(Math.floor((elapsed * perSecond) / 1000) + 1, Math.ceil((ms * perSecond) / 1000));
    while (issued < due) {
      const k = issued++;
      const at = start + (k * 1000) / perSecond;
      pending.push(op(k).then((ok) => void (ok ? latenciesMs.push(performance.now() - at) : errors++), () => void errors++));
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(pending);
  return { count: latenciesMs.length, errors, seconds: (performance.now() - start) / 1000, latenciesMs, issued };
}

export const fmt = (xs: readonly number[]): string => `p50 ${percentile(xs, 50).toFixed(1)} ms, p99 ${percentile(xs, 99).toFixed(1)} ms`;
