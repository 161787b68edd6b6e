import { DIED_ERROR, EMPTY_DOCUMENT, MAX_RESULTS, addResults, newDocument, parseDocument, renderResults, room } from './state.js';

describe('integrity results document', () => {
  it('renders a run in progress as the lease holder runs it, and one whose replica died as ended with an error', () => {
    const doc = newDocument('run-1', true, new Date('2026-01-02T03:04:05.678Z'));
    addResults(doc, [{ description: 'a', fixed: false }], false);
    expect(renderResults(doc, 'run-1')).toEqual({
      data: { inProgress: true, fixingErrors: true, tooManyErrors: false, startTime: '2026-01-02T03:04:05.678Z', endTime: null, error: null, results: [{ description: 'a', fixed: false }] },
      meta: { pagination: { limit: -1, offset: 0, totalCount: 1 } },
    });
    expect(renderResults(doc, null).data).toMatchObject({ inProgress: false, error: DIED_ERROR, endTime: null });
    expect(renderResults(doc, 'run-2').data).toMatchObject({ inProgress: false, error: DIED_ERROR });
    const ended = { ...doc, inProgress: false, endTime: '2026-01-02T03:05:00.000Z' };
    expect(renderResults(ended, null).data).toMatchObject({ inProgress: false, error: null });
  });

  it('keeps at most 1,000 results and then says there were too many', () => {
    const doc = newDocument('r', false, new Date());
    addResults(doc, Array.from({ length: MAX_RESULTS - 1 }, (_, i) => ({ description: `d${i}`, fixed: false })), false);
    expect(room(doc)).toBe(1);
    expect(doc.tooManyErrors).toBe(false);
    addResults(doc, [{ description: 'last', fixed: true }, { description: 'over', fixed: true }], false);
    expect(doc.results).toHaveLength(MAX_RESULTS);
    expect(doc.results.at(-1)).toEqual({ description: 'last', fixed: true });
    expect(doc.tooManyErrors).toBe(true);
    expect(room(doc)).toBe(1);
    const other = newDocument('s', false, new Date());
    addResults(other, [], true);
    expect(other.tooManyErrors).toBe(true);
  });

  it('reads an absent or unreadable document as no run', () => {
    expect(parseDocument(null)).toEqual(EMPTY_DOCUMENT);
    expect(parseDocument('{not json')).toEqual(EMPTY_DOCUMENT);
    expect(parseDocument('{"inProgress":"yes","results":[{"description":1},{"description":"x","fixed":1}]}')).toEqual({
      ...EMPTY_DOCUMENT,
      results: [{ description: 'x', fixed: false }],
    });
  });
});
