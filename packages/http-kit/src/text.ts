import { ApiError } from '@ziti/errors';

/**
 * Text that PostgreSQL cannot store is refused where a request enters its context, before any
 * store or RPC sees it: a NUL character (refused by `text`, `jsonb` and the wire protocol) and an
 * unpaired UTF-16 surrogate (which the driver would silently turn into U+FFFD, so the stored text
 * would not be the text sent). JSON escapes (`"\u0000"`, `"\ud800"`) and percent-encoding (`%00`)
 * reach the handlers as these characters, so the check runs on decoded values.
 */
export function isStorableText(s: string): boolean {
  return !UNSTORABLE.test(s);
}

/** NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one (UTF-16 code units: no `u` flag). */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The first string (value or object key) in `value` that is not storable, with its dotted path. */
export function firstUnstorableText(value: unknown, root: string): { field: string; value: string } | undefined {
  // Iterative: bodies are depth-limited when parsed, but query objects and handler input are not.
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (!isStorableText(v)) return { field: path, value: v };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}.${i}`]);
    } else if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        const at = path === '' ? key : `${path}.${key}`;
        if (!isStorableText(key)) return { field: at, value: key };
        stack.push([(v as Record<string, unknown>)[key], at]);
      }
    }
  }
  return undefined;
}

/** What a refused value is shown as in the error's cause: escaped, and short. */
function shown(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value).slice(1, -1);
}

/** 400 COULD_NOT_VALIDATE for `field` (of the body, the query or a header) holding unstorable text. */
export function unstorableTextError(field: string, where: 'body' | 'query' | 'header', value: string): ApiError {
  return ApiError.field(field, `${field} in ${where} must not contain NUL or unpaired surrogate characters`, shown(value));
}

/**
 * Refuses a request whose path parameters, query or body hold text that cannot be stored: a path
 * parameter names an entity that cannot exist (404 NOT_FOUND); a query value or body field is a
 * field error (400 COULD_NOT_VALIDATE, `cause.field` naming it).
 */
export function assertStorableRequest(input: { params?: Record<string, string>; query?: unknown; body?: unknown }): void {
  for (const key in input.params) {
    if (!isStorableText(input.params[key]!)) throw ApiError.notFound();
  }
  const q = input.query === undefined ? undefined : firstUnstorableText(input.query, '');
  if (q) throw unstorableTextError(q.field, 'query', q.value);
  const b = input.body === undefined ? undefined : firstUnstorableText(input.body, '');
  if (b) throw unstorableTextError(b.field || '(root)', 'body', b.value);
}
