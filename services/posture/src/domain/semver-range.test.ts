import { parseRange, parseVersion, rangeError } from './semver-range.js';

const satisfies = (range: string, version: string) => {
  const v = parseVersion(version);
  if (v instanceof Error) throw v;
  return parseRange(range)(v);
};

describe('blang/semver ranges', () => {
  it.each([
    ['>=10.0.0', '10.0.19041', true],
    ['>=10.0.0', '9.9.9', false],
    ['>=10.0.0 <11.0.0', '10.5.0', true],
    ['>=10.0.0 <11.0.0', '11.0.0', false],
    ['>= 10.0.0', '10.0.0', true],
    ['<2.0.0 || >=3.0.0', '2.5.0', false],
    ['<2.0.0 || >=3.0.0', '3.1.0', true],
    ['1.2.3', '1.2.3', true],
    ['==1.2.3', '1.2.4', false],
    ['!=1.2.3', '1.2.4', true],
    ['!1.2.3', '1.2.3', false],
    ['1.2.x', '1.2.9', true],
    ['1.2.x', '1.3.0', false],
    ['>1.x', '2.0.0', true],
    ['>1.x', '1.9.9', false],
    ['<=1.2.x', '1.2.99', true],
    ['<=1.2.x', '1.3.0', false],
    ['!=1.x', '1.5.0', false],
    // blang expands !=1.x to "<1.0.0 >=2.0.0" within one AND group: nothing satisfies it.
    ['!=1.x', '2.0.0', false],
    ['>=5.0.0', '5.15.0-76-generic', true],
    ['>=1.0.0', '1.0.0-beta', false],
    ['>=1.0.0-alpha <1.0.0', '1.0.0-beta', true],
  ])('%s satisfied by %s: %s', (range, version, expected) => {
    expect(satisfies(range, version)).toBe(expected);
  });

  it.each(['^1.0.0', '~1.2.3', '1.0', '>=10', 'x', '|| 1.0.0', '1.0.0 ||', '', 'v1.0.0', '>=01.0.0'])('refuses %j', (range) => {
    expect(rangeError(range)).not.toBeNull();
  });

  it('parses versions strictly', () => {
    expect(parseVersion('10.0')).toBeInstanceOf(Error);
    expect(parseVersion('1.0.0-01')).toBeInstanceOf(Error);
    expect(parseVersion('1.0.0+build.5')).not.toBeInstanceOf(Error);
  });
});
