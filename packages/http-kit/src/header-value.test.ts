import { headerValue, quotedHeaderParam } from './header-value.js';

/** What Node refuses in a header value (`checkInvalidHeaderChar`). */
const NODE_INVALID = /[^\t\x20-\x7e\x80-\xff]/;

describe('header values built from data', () => {
  it('keeps visible ASCII, space and tab as they are', () => {
    expect(headerValue('Bearer realm="x" error="invalid"')).toBe('Bearer realm="x" error="invalid"');
    expect(headerValue('a\tb ~%')).toBe('a\tb ~%');
  });

  it('percent-encodes CR, LF, NUL, other controls, Latin-1 and beyond, and unpaired surrogates as UTF-8', () => {
    expect(headerValue('a\r\nset-cookie: x')).toBe('a%0D%0Aset-cookie: x');
    expect(headerValue('\u0000\u007f\u00e9€日')).toBe('%00%7F%C3%A9%E2%82%AC%E6%97%A5');
    expect(headerValue('\ud800x\udc00')).toBe('%EF%BF%BDx%EF%BF%BD');
    expect(headerValue('😀')).toBe('%F0%9F%98%80');
    for (const v of ['\r\n', '€', '\ud800', '\u0000', 'x'.repeat(10) + '\n']) expect(NODE_INVALID.test(headerValue(v))).toBe(false);
  });

  it('quotes an auth-param: quote and backslash escaped, no line break or non-ASCII left', () => {
    expect(quotedHeaderParam('plain')).toBe('"plain"');
    expect(quotedHeaderParam('a" error="forged')).toBe('"a\\" error=\\"forged"');
    expect(quotedHeaderParam('back\\slash')).toBe('"back\\\\slash"');
    expect(quotedHeaderParam('tab\there\r\n€')).toBe('"tab%09here%0D%0A%E2%82%AC"');
    expect(quotedHeaderParam('')).toBe('""');
    // One quoted-string (RFC 7230 §3.2.6), whatever the text.
    for (const t of ['"', '\\', '\\"', '"\\', 'x"; y="z', '€"\r\n"']) expect(quotedHeaderParam(t)).toMatch(/^"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"$/);
  });
});
