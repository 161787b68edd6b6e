import { nfc, normalizeName } from './names.js';
import { compileFilter, type EntityQuerySchema } from './query/index.js';

const COMPOSED = 'caf\u00e9';
const DECOMPOSED = 'cafe\u0301';

describe('normalizeName', () => {
  it('gives one form for spellings that differ by normal form or surrounding white space', () => {
    for (const spelling of [COMPOSED, DECOMPOSED, `${COMPOSED} `, ` ${DECOMPOSED}`, `\t${COMPOSED}\n`, `\u00a0${COMPOSED}\u3000`, `\ufeff${COMPOSED}`]) {
      expect(normalizeName(spelling)).toBe(COMPOSED);
    }
  });

  it('keeps inner white space, case and characters without a composed form', () => {
    expect(normalizeName(' a  B ')).toBe('a  B');
    expect(normalizeName('x\u0301\u0302')).toBe('x\u0301\u0302');
    expect(normalizeName('\u0301x')).toBe('\u0301x');
  });

  it('makes a name of white space only empty', () => {
    for (const blank of ['', ' ', '   ', '\t\n', '\u00a0', '\u2003\u3000']) expect(normalizeName(blank)).toBe('');
  });

  it('is idempotent', () => {
    for (const s of [COMPOSED, DECOMPOSED, ' \u0301x ', 'A\u030a ', '\u212b', 'e\u0301 \u0301']) {
      expect(normalizeName(normalizeName(s))).toBe(normalizeName(s));
    }
  });

  it('nfc changes the normal form only', () => {
    expect(nfc(` ${DECOMPOSED} `)).toBe(` ${COMPOSED} `);
  });
});

describe('filters on an NFC column', () => {
  const col = (c: string) => (a: string) => `${a}."${c}"`;
  const schema: EntityQuerySchema = {
    entity: 'things',
    table: '"things"',
    symbols: {
      name: { kind: 'scalar', type: 'string', sql: col('name'), nfc: true },
      label: { kind: 'scalar', type: 'string', sql: col('label') },
    },
  };

  it('normalise string literals compared with it, in every operator', () => {
    expect(compileFilter(`name = "${DECOMPOSED}"`, schema).params).toEqual([COMPOSED]);
    expect(compileFilter(`name in ["${DECOMPOSED}", "x"]`, schema).params).toEqual([COMPOSED, 'x']);
    expect(compileFilter(`name contains " e\u0301"`, schema).params).toEqual([' \u00e9']);
    expect(compileFilter(`not (name != "${DECOMPOSED}")`, schema).params).toEqual([COMPOSED]);
  });

  it('leave literals of other columns as written', () => {
    expect(compileFilter(`label = "${DECOMPOSED}"`, schema).params).toEqual([DECOMPOSED]);
  });
});
