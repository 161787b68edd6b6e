import qs from 'qs';
import { parseQueryString } from './query-string.js';

const viaQs = (raw: string) => qs.parse(raw, { allowPrototypes: true });

describe('parseQueryString', () => {
  it('answers what qs answers for hand-picked query strings', () => {
    const cases = [
      '',
      'method=password',
      'limit=10&offset=20',
      'roleFilter=a&roleFilter=b&roleFilter=c',
      'a',
      'a=',
      '=1',
      '&&a=1&&',
      'a=1=2',
      'a.b=1',
      'hasOwnProperty=1',
      'toString=x&valueOf=y',
      '__proto__=x',
      'constructor=1&prototype=2',
      'filter=name%3D%22x%22',
      'filter=name+contains+%22a%22',
      'a[b]=1',
      'a[]=1&a[]=2',
      'a%5Bb%5D=1',
      'bad=%E0%A4%A',
      'q=~tilde_dot.dash-',
      Array.from({ length: 1005 }, (_, i) => `k${i}=${i}`).join('&'),
      Array.from({ length: 20 }, (_, i) => `same=${i}`).join('&'),
      Array.from({ length: 21 }, (_, i) => `same=${i}`).join('&'),
    ];
    for (const raw of cases) expect([raw, parseQueryString(raw)]).toEqual([raw, viaQs(raw)]);
  });

  it('answers what qs answers for generated plain query strings', () => {
    const chars = 'ab_.~-=&1';
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let n = 0; n < 3000; n++) {
      const raw = Array.from({ length: Math.floor(next() * 16) }, () => chars[Math.floor(next() * chars.length)]).join('');
      expect([raw, parseQueryString(raw)]).toEqual([raw, viaQs(raw)]);
    }
  });

  it('never sets the prototype of the result', () => {
    const q = parseQueryString('__proto__=x&polluted=1');
    expect(Object.getPrototypeOf(q)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
