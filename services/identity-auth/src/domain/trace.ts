import { randomUUID } from 'node:crypto';
import { ApiError } from '@ziti/errors';
import type { IdentityTrace } from './model.js';

/** Nanoseconds per unit of Go's `time.ParseDuration`. */
const UNITS: Record<string, bigint> = {
  ns: 1n, us: 1_000n, 'µs': 1_000n, 'μs': 1_000n, ms: 1_000_000n, s: 1_000_000_000n, m: 60_000_000_000n, h: 3_600_000_000_000n,
};
const MAX_NS = (1n << 63n) - 1n;

/**
 * Go's `time.ParseDuration` (what the controller parses `duration` with): a signed sequence of
 * decimal numbers with a unit each (`300ms`, `-1.5h`, `2h45m`; units ns, us/µs, ms, s, m, h), or
 * `0`. Returns milliseconds; throws an Error with Go's message otherwise (overflow included).
 */
export function parseGoDuration(input: string): number {
  const invalid = () => new Error(`time: invalid duration "${input}"`);
  let s = input;
  let negative = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    negative = s.startsWith('-');
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') throw invalid();
  let total = 0n;
  while (s !== '') {
    const m = /^(\d*)(?:\.(\d*))?/.exec(s)!;
    const [whole = '', frac = ''] = [m[1], m[2]];
    if (whole === '' && frac === '') throw invalid(); // no digits: "h", ".h"
    s = s.slice(m[0].length);
    const unitMatch = /^[^0-9.]+/.exec(s);
    if (!unitMatch) throw new Error(`time: missing unit in duration "${input}"`);
    const unit = unitMatch[0];
    const perUnit = UNITS[unit];
    if (perUnit === undefined) throw new Error(`time: unknown unit "${unit}" in duration "${input}"`);
    s = s.slice(unit.length);
    let ns = BigInt(whole || '0') * perUnit;
    if (frac !== '') ns += (BigInt(frac) * perUnit) / 10n ** BigInt(frac.length);
    total += ns;
    if (total > MAX_NS + (negative ? 1n : 0n)) throw invalid();
  }
  const ms = Number(total / 1_000_000n) + Number(total % 1_000_000n) / 1e6;
  return negative ? -ms : ms;
}

/** The channels OpenZiti traces when none (or `all`) are named. */
export const ALL_TRACE_CHANNELS = ['selectPath', 'establishPath'];

/** `traceSpec`, once schema-validated. */
export interface TraceSpecInput {
  enabled?: boolean;
  duration?: string;
  traceId?: string;
  channels?: string[];
}

/**
 * The trace a `traceSpec` asks for, as the controller's `updateTracing` builds it: null when not
 * `enabled`; else `duration` in Go's syntax (a bad one is 400 on `duration`, with Go's message), a
 * random UUID when `traceId` is empty, and every channel when none (or `all`) are named.
 */
export function traceOfSpec(spec: TraceSpecInput, now = Date.now()): IdentityTrace | null {
  if (spec.enabled !== true) return null;
  const duration = spec.duration ?? '';
  let ms: number;
  try {
    ms = parseGoDuration(duration);
  } catch (err) {
    throw ApiError.field('duration', (err as Error).message, duration);
  }
  const channels = !spec.channels || spec.channels.length === 0 || spec.channels.includes('all') ? ALL_TRACE_CHANNELS : [...new Set(spec.channels)];
  return { traceId: spec.traceId || randomUUID(), until: new Date(now + ms), channels };
}
