import { listResult } from './list.js';

const page = (limit: number) => ({ items: [{ id: 'a', name: '"limit":"x"' }], totalCount: 1, limit, offset: 0, filterableFields: ['id', 'name'] });

describe('list envelopes', () => {
  it('renders an ordinary page as a JSON body', () => {
    expect(listResult(page(10), (x) => x)).toEqual({
      body: { data: [{ id: 'a', name: '"limit":"x"' }], meta: { pagination: { limit: 10, offset: 0, totalCount: 1 }, filterableFields: ['id', 'name'] } },
    });
  });

  it('writes the exact MaxInt64 digits for an unlimited page', () => {
    const r = listResult(page(9223372036854775807), (x) => x);
    expect(r.body).toBeUndefined();
    expect(r.contentType).toMatch(/^application\/json/);
    expect(r.raw).toContain('"pagination":{"limit":9223372036854775807,"offset":0,"totalCount":1}');
    expect(JSON.parse(String(r.raw)).data).toEqual([{ id: 'a', name: '"limit":"x"' }]);
  });
});
