import fc from 'fast-check';

/**
 * The hostile values of the fuzz suite: fixed catalogues (the cases every operation gets) and the
 * fast-check arbitraries that add seeded random ones. Everything that goes into a URL is returned
 * already percent-encoded, as it is meant to reach the server.
 */

/** Percent-encodes every byte of a string but the unreserved ones; lone surrogates as their 3-byte (WTF-8) form. */
export function pct(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (/[A-Za-z0-9\-._~]/.test(s[i]!)) {
      out += s[i];
      continue;
    }
    let cp = c;
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    for (const b of utf8Bytes(cp)) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function utf8Bytes(cp: number): number[] {
  if (cp < 0x80) return [cp];
  if (cp < 0x800) return [0xc0 | (cp >> 6), 0x80 | (cp & 63)];
  if (cp < 0x10000) return [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)];
  return [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)];
}

/** Bad ids for a path parameter, as they appear in the request target. */
export const BAD_PATH_IDS: readonly { label: string; value: string }[] = [
  { label: 'NUL', value: '%00' },
  { label: 'NUL inside', value: 'a%00b' },
  { label: 'lone surrogate', value: '%ED%A0%80' },
  { label: 'invalid UTF-8 byte', value: '%FF' },
  { label: 'very long (4096)', value: 'x'.repeat(4096) },
  { label: 'unicode', value: pct('☃-идентификатор-🦄') },
  { label: 'dot-dot', value: '..' },
  { label: 'encoded slash', value: '%2F' },
  { label: 'encoded dot-dot', value: '%2e%2e' },
  { label: 'lone percent', value: '%' },
  { label: 'bad escape', value: '%zz' },
  { label: 'SQL quote', value: pct("' OR '1'='1") },
  { label: 'negative number', value: '-1' },
];

/** ZitiQL garbage for `filter` (raw strings; encoded by the caller, except `rawEncoded`). */
export const BAD_FILTERS: readonly { label: string; value?: string; rawEncoded?: string }[] = [
  { label: 'empty', value: '' },
  { label: 'open paren', value: '(' },
  { label: 'dangling operator', value: 'name =' },
  { label: 'dangling and', value: 'name = "x" and' },
  { label: 'unknown operator', value: 'name ~ 1' },
  { label: 'NUL raw', rawEncoded: '%00' },
  { label: 'NUL in a string', value: 'name = "a\u0000b"' },
  { label: 'lone surrogate in a string', value: 'name contains "\ud800"' },
  { label: 'NUL as identifier', value: '\u0000 = 1' },
  { label: 'unknown field', value: 'nosuchfield = 1' },
  { label: 'huge number', value: 'name = 99999999999999999999999999' },
  { label: 'bad datetime', value: 'createdAt > datetime(not-a-date)' },
  { label: 'bad paging clause', value: 'true limit -5 skip abc' },
  { label: 'sort on unknown field', value: 'true sort by nosuchfield asc' },
  { label: 'nested 1500 parens', value: `${'('.repeat(1500)}true${')'.repeat(1500)}` },
  { label: 'in-list of 500', value: `id in [${Array.from({ length: 500 }, (_, i) => `"x${i}"`).join(',')}]` },
  { label: 'invalid UTF-8 byte', rawEncoded: 'name%20%3D%20%22%FF%22' },
];

export const BAD_INTEGERS: readonly string[] = ['99999999999999999999', '2147483648', '9223372036854775808', '-5', '-1', 'abc', '1.5', '1e3', '0x10', '', '%00', 'NaN', 'Infinity', '%ED%A0%80'];
export const BAD_SORTS: readonly string[] = ['nosuchfield asc', 'name sideways', '%00 asc', 'name asc,name asc,name asc', '', ',,,', 'name asc limit 1'];
/** Values for other query parameters (already encoded). */
export const BAD_QUERY_VALUES: readonly { label: string; value: string }[] = [
  { label: 'NUL', value: '%00' },
  { label: 'NUL inside', value: 'a%00b' },
  { label: 'lone surrogate', value: '%ED%A0%80' },
  { label: 'invalid UTF-8 byte', value: '%FF' },
  { label: 'empty', value: '' },
  { label: 'very long (2000)', value: 'q'.repeat(2000) },
];

/** Numbers at and past the edges, as JSON text, and strings that look like numbers. */
export const BOUNDARY_NUMBERS: readonly { label: string; raw?: string; str?: string }[] = [
  { label: '0', raw: '0' },
  { label: '-1', raw: '-1' },
  { label: '2^31', raw: '2147483648' },
  { label: '2^53+1', raw: '9007199254740993' },
  { label: '1e308', raw: '1e308' },
  { label: '-0', raw: '-0' },
  { label: '1e999 (overflows to Infinity)', raw: '1e999' },
  { label: '0.5', raw: '0.5' },
  { label: '"NaN"', str: 'NaN' },
  { label: '"Infinity"', str: 'Infinity' },
  { label: '"-1e999"', str: '-1e999' },
];

export const DEEP = 5000;
export const deepArray = (n = DEEP) => `${'['.repeat(n)}${']'.repeat(n)}`;
export const deepObject = (n = DEEP) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;

/** A 16-bit code unit arbitrary that favours the characters that break things. */
const nastyUnit = fc.oneof(
  { weight: 3, arbitrary: fc.char16bits() },
  { weight: 2, arbitrary: fc.constantFrom('\u0000', '\ud800', '\udfff', '\ufffe', '%', '/', '..', '"', '\\', "'", '\n', '\u202e', '$', '{', '[') },
  { weight: 3, arbitrary: fc.char() },
);

/** Random strings (lone surrogates, NUL and friends included). */
export const nastyString = (maxLength = 24) => fc.string({ unit: nastyUnit, maxLength });

const FILTER_TOKENS = [
  'name', 'id', 'tags.x', 'createdAt', '=', '!=', '>', '<=', 'contains', 'icontains', 'in', 'not', 'and', 'or', '(', ')', '[', ']',
  ',', '"x"', '"\u0000"', "'x'", '1', '-1', '1e999', 'true', 'null', 'datetime(2020-01-01T00:00:00Z)', 'limit', 'skip', 'sort by',
  'asc', 'desc', 'allOf', 'anyOf', '#all', '@x', '$', '\ud800',
];

/** ZitiQL-looking token soups and plain random strings for `filter`. */
export const filterArb = fc.oneof(
  { weight: 3, arbitrary: fc.array(fc.constantFrom(...FILTER_TOKENS), { minLength: 1, maxLength: 9 }).map((t) => t.join(' ')) },
  { weight: 1, arbitrary: nastyString(40) },
);

/** Integer-ish query values: boundaries, random integers, random strings. */
export const intQueryArb = fc.oneof(
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  fc.double().map(String),
  nastyString(8),
);

/** A JSON-ish value of any shape for a body field. */
export const anyJsonArb = fc.oneof(fc.jsonValue({ maxDepth: 2 }), nastyString(), fc.constantFrom(null, -0, 1e308, 2 ** 53 + 1, [], {}));

/** FNV-1a of a text, mixed with the run's seed: one stable seed per operation and caller. */
export function seedFor(base: number, key: string): number {
  let h = 0x811c9dc5 ^ base;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}

/** The run's seed: `FUZZ_SEED` (an integer) or the fixed default. */
export const DEFAULT_SEED = 20260601;
export function runSeed(): number {
  const raw = process.env.FUZZ_SEED;
  if (raw === undefined || raw === '') return DEFAULT_SEED;
  const n = Number(raw);
  if (!Number.isInteger(n)) throw new Error(`FUZZ_SEED must be an integer, got ${JSON.stringify(raw)}`);
  return n | 0;
}
