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
