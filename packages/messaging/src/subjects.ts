import { createHash } from 'node:crypto';
import { logger, problemLogger } from '@ziti/log';
import type { ChangeEvent } from './types.js';

/**
 * Subject and filter rules shared by the NATS and in-process buses, so both match events the same
 * way.
 *
 * - A `source` is one subject token (`identity-auth`, no dots or wildcards), or `'*'` for any.
 * - A `type` is one or more dot-separated tokens (`api-session.deleted`). A type *pattern* may use
 *   NATS wildcards token-wise: `*` matches exactly one token, `>` (last token only) one or more.
 *   So `identity.*` matches `identity.deleted` but not `identity.role.changed`; `identity.>`
 *   matches both.
 */

const TOKEN = /^[A-Za-z0-9_-]+$/;

/** Throws unless `source` is a legal single token or `'*'`. */
export function assertSource(source: string, allowWildcard: boolean): void {
  if (allowWildcard && source === '*') return;
  if (!TOKEN.test(source)) {
    throw new Error(`invalid event source ${JSON.stringify(source)}: one token of [A-Za-z0-9_-]`);
  }
}

/** Throws unless `type` is a legal event type (or, with `allowWildcards`, a type pattern). */
export function assertType(type: string, allowWildcards: boolean): void {
  const tokens = type.split('.');
  tokens.forEach((t, i) => {
    const wildcard = allowWildcards && (t === '*' || (t === '>' && i === tokens.length - 1));
    if (!wildcard && !TOKEN.test(t)) {
      throw new Error(`invalid event type ${allowWildcards ? 'pattern ' : ''}${JSON.stringify(type)}`);
    }
  });
}

/** Throws unless the event can be published (id, source and type well-formed). */
export function assertPublishable(event: ChangeEvent): void {
  if (typeof event?.id !== 'string' || event.id.length === 0) throw new Error('event id is required');
  assertSource(event.source, false);
  assertType(event.type, false);
}

/** True when `type` matches the NATS-style `pattern` (token-wise `*` and trailing `>`). */
export function typeMatches(pattern: string, type: string): boolean {
  const p = pattern.split('.');
  const t = type.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return t.length > i;
    if (i >= t.length) return false;
    if (p[i] !== '*' && p[i] !== t[i]) return false;
  }
  return p.length === t.length;
}

/** A compiled (source, types) selection. */
export interface EventFilter {
  source: string;
  types: string[];
  matches(event: Pick<ChangeEvent, 'source' | 'type'>): boolean;
}

/** Validates and compiles a subscription's (source, types). `types` must not be empty. */
export function compileFilter(source: string, types: string[]): EventFilter {
  assertSource(source, true);
  if (!Array.isArray(types) || types.length === 0) throw new Error('at least one event type is required');
  for (const t of types) assertType(t, true);
  const sorted = [...new Set(types)].sort();
  return {
    source,
    types: sorted,
    matches: (e) => (source === '*' || e.source === source) && sorted.some((p) => typeMatches(p, e.type)),
  };
}

/** `<prefix>.<source>.<type>`, the subject an event is published on. */
export function eventSubject(prefix: string, event: Pick<ChangeEvent, 'source' | 'type'>): string {
  return `${prefix}.${event.source}.${event.type}`;
}

/**
 * The single NATS filter subject of a consumer (nats-server 2.9 allows one per consumer): exact
 * when there is one type pattern, else `<prefix>.<source|*>.>`, the rest being filtered in code.
 */
export function filterSubject(prefix: string, filter: EventFilter): string {
  const type = filter.types.length === 1 ? filter.types[0] : '>';
  return `${prefix}.${filter.source}.${type}`;
}

/**
 * The durable consumer name of a group's subscription: `<group>__<source|all>__<hash of types>`,
 * restricted to `[A-Za-z0-9_-]`. The same group subscribing to different selections gets
 * separate consumers; replicas subscribing with the same selection share one.
 */
export function durableName(group: string, filter: EventFilter): string {
  if (typeof group !== 'string' || group.trim() === '') throw new Error('consumer group name is required');
  const clean = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  const hash = createHash('sha256').update(filter.types.join(',')).digest('hex').slice(0, 10);
  return `${clean(group)}__${filter.source === '*' ? 'all' : clean(filter.source)}__${hash}`;
}

/** A set of the most recent ids, bounded: the oldest is forgotten once `capacity` is exceeded. */
export class RecentIds {
  private readonly ids = new Set<string>();
  constructor(private readonly capacity: number) {}

  /** Records `id`; returns false when it was already among the recent ids. */
  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > this.capacity) {
      const oldest = this.ids.values().next().value as string;
      this.ids.delete(oldest);
    }
    return true;
  }
}

/** Retry delay after the n-th failed attempt (1-based): base·2^(n-1), capped. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
}

export type Logger = (msg: string, err?: unknown) => void;

/** The `messaging` log: a problem with its error at error level, one without at warn. */
export const defaultLog: Logger = problemLogger(logger('messaging'));
