import { SemVer, compare } from 'semver';

/**
 * OS version ranges with the syntax and semantics of blang/semver v3 `ParseRange`, the library the
 * controller evaluates OS posture checks with (node-semver's own range grammar differs: `^`, `~`,
 * partial versions and its pre-release rule). Versions are parsed and compared with node-semver.
 *
 * - Comparators: `<`, `<=`, `>`, `>=`, `=`/`==`/none (equal), `!`/`!=` (not equal), each followed by
 *   a full `MAJOR.MINOR.PATCH[-pre][+build]` version. A space after an operator is allowed
 *   (`>= 1.0.0`).
 * - Space-separated comparators are ANDed; `||` ORs groups (AND binds tighter).
 * - Lower-case `x` wildcards are expanded as blang does: `1.2.x` → `>=1.2.0 <1.3.0`,
 *   `>1.x` → `>=2.0.0`, `<=1.2.x` → `<1.3.0`, `!=1.x` → `<1.0.0 >=2.0.0` (`1.x.x` counts as a
 *   patch wildcard, as in blang).
 * - Pre-releases compare by semver precedence and are not excluded (unlike node-semver's default).
 */
export type VersionRange = (version: SemVer) => boolean;

const STRICT = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

/** A strict semantic version (blang `semver.Parse`), or an Error. */
export function parseVersion(text: string): SemVer | Error {
  const m = STRICT.exec(text);
  if (!m) return new Error(`Invalid version ${JSON.stringify(text)}`);
  const pre = m[4];
  if (pre && pre.split('.').some((id) => /^\d+$/.test(id) && id.length > 1 && id.startsWith('0'))) {
    return new Error(`Numeric PreRelease version must not contain leading zeroes ${JSON.stringify(text)}`);
  }
  try {
    return new SemVer(text);
  } catch (err) {
    return err as Error;
  }
}

/** blang's splitAndTrim: split on spaces, except right after `>`, `<` or `=`. */
function splitAndTrim(s: string): string[] {
  const out: string[] = [];
  let last = 0;
  let lastChar = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] === ' ' && !'><='.includes(lastChar || '#')) {
      if (last < i - 1) out.push(s.slice(last, i));
      last = i + 1;
    } else if (s[i] !== ' ') {
      lastChar = s[i]!;
    }
  }
  if (last < s.length - 1) out.push(s.slice(last));
  return out.map((p) => p.replace(/ /g, ''));
}

function splitComparatorVersion(s: string): [string, string] {
  const i = s.search(/\d/);
  if (i === -1) throw new Error(`Could not get version from string: ${JSON.stringify(s)}`);
  return [s.slice(0, i).trim(), s.slice(i)];
}

function expandWildcard(part: string): string[] {
  if (!part.includes('x')) return [part];
  const [op, v] = splitComparatorVersion(part);
  const segments = v.split('.');
  const wildcard = segments[segments.length - 1] === 'x' ? segments.length : 0; // 2 = minor, 3 = patch
  let flat = v.replace('.x.x', '.x').replace('.x', '.0');
  if (flat.split('.').length === 2) flat += '.0';
  const bump = (index: number) => {
    const parts = flat.split('.');
    const n = Number.parseInt(parts[index]!, 10);
    if (Number.isNaN(n)) return flat;
    parts[index] = String(n + 1);
    return parts.join('.');
  };
  const incremented = wildcard === 3 ? bump(1) : wildcard === 2 ? bump(0) : '';
  switch (op) {
    case '>':
      return [`>=${incremented}`];
    case '>=':
      return [`>=${flat}`];
    case '<':
      return [`<${flat}`];
    case '<=':
      return [`<${incremented}`];
    case '':
    case '=':
    case '==':
      return [`>=${flat}`, `<${incremented}`];
    case '!=':
    case '!':
      return [`<${flat}`, `>=${incremented}`];
    default:
      return [part];
  }
}

const COMPARATORS: Record<string, (c: number) => boolean> = {
  '': (c) => c === 0,
  '=': (c) => c === 0,
  '==': (c) => c === 0,
  '!': (c) => c !== 0,
  '!=': (c) => c !== 0,
  '>': (c) => c > 0,
  '>=': (c) => c >= 0,
  '<': (c) => c < 0,
  '<=': (c) => c <= 0,
};

/** Parses a range; throws an Error with blang's wording when it is not valid. */
export function parseRange(text: string): VersionRange {
  const parts = splitAndTrim(text);
  const groups: string[][] = [];
  let last = 0;
  parts.forEach((p, i) => {
    if (p !== '||') return;
    if (i === 0) throw new Error("First element in range is '||'");
    groups.push(parts.slice(last, i));
    last = i + 1;
  });
  if (last === parts.length) throw new Error("Last element in range is '||'");
  groups.push(parts.slice(last));

  const compiled = groups.map((group) =>
    group.flatMap(expandWildcard).map((part) => {
      const [op, v] = splitComparatorVersion(part);
      const test = COMPARATORS[op];
      if (!test) throw new Error(`Could not parse Range ${JSON.stringify(part)}: Could not parse comparator ${JSON.stringify(op)}`);
      const version = parseVersion(v);
      if (version instanceof Error) throw new Error(`Could not parse Range ${JSON.stringify(part)}: ${version.message}`);
      return (candidate: SemVer) => test(compare(candidate, version));
    }),
  );
  return (version) => compiled.some((and) => and.every((c) => c(version)));
}

/** The error of an invalid range, or null when it parses. */
export function rangeError(text: string): string | null {
  try {
    parseRange(text);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}
