/**
 * Header values built from data (an issuer an admin typed, an id a caller sent) go through these
 * two, so that no text can split a header, make Node refuse it (`ERR_INVALID_CHAR`: CR, LF, NUL,
 * anything beyond Latin-1) or add parameters to a challenge. What is not visible ASCII (or space
 * and tab in a value) is percent-encoded as UTF-8 (an unpaired surrogate as U+FFFD); the value
 * stays readable and a header line always stays one line.
 */

/** Visible ASCII, space and horizontal tab: what a header value may hold as it is. */
const SAFE_VALUE = /^[\t\x20-\x7e]*$/;

/** Percent-encodes every code point of `text` that `keep` refuses (UTF-8 bytes). */
function encodeOutside(text: string, keep: (c: string) => boolean): string {
  let out = '';
  for (const c of text) {
    if (keep(c)) out += c;
    else for (const b of Buffer.from(c, 'utf8')) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** `text` as a header value Node sends as is: anything but visible ASCII, space and tab percent-encoded. */
export function headerValue(text: string): string {
  if (SAFE_VALUE.test(text)) return text;
  return encodeOutside(text, (c) => c === '\t' || (c >= ' ' && c <= '~'));
}

/**
 * `text` as an RFC 7230 `quoted-string` (the value of an auth-param, RFC 7235 §2.1), quotes
 * included: `"` and `\` are escaped with `\`, and anything but visible ASCII and space is
 * percent-encoded, so the value can neither end the string early nor leave the header line.
 */
export function quotedHeaderParam(text: string): string {
  const printable = encodeOutside(text, (c) => c >= ' ' && c <= '~');
  return `"${printable.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}
