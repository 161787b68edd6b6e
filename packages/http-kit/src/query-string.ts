import qs from 'qs';

/** A query string made only of these needs no decoding and has no bracket syntax. */
const PLAIN = /^[A-Za-z0-9_.~=&-]*$/;
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
/** qs reads at most this many parameters (its `parameterLimit`). */
const PARAMETER_LIMIT = 1000;
/** qs turns a name given more often than this (its `arrayLimit`) into an object by index. */
const ARRAY_LIMIT = 20;

const viaQs = (raw: string) => qs.parse(raw, { allowPrototypes: true }) as Record<string, string | string[]>;

/**
 * The query string (without `?`) as the handlers see it: a value per name, an array for a name
 * given more than once. This is `qs.parse(raw, { allowPrototypes: true })`; a plain query string
 * (no percent-encoding, `+` or brackets, as every SDK request is) is split directly, with the
 * same result, and anything else goes to qs.
 */
export function parseQueryString(raw: string): Record<string, string | string[]> {
  if (!PLAIN.test(raw)) return viaQs(raw);
  const out: Record<string, string | string[]> = {};
  const parts = raw.split('&');
  if (parts.length > PARAMETER_LIMIT) return viaQs(raw);
  for (const part of parts) {
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq);
    if (key === '') continue;
    if (UNSAFE_KEYS.has(key)) return viaQs(raw);
    const value = eq < 0 ? '' : part.slice(eq + 1);
    const seen = Object.prototype.hasOwnProperty.call(out, key) ? out[key] : undefined;
    if (seen === undefined) out[key] = value;
    else if (!Array.isArray(seen)) out[key] = [seen, value];
    else if (seen.length < ARRAY_LIMIT) seen.push(value);
    else return viaQs(raw);
  }
  return out;
}
