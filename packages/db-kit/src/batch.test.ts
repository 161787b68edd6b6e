import { batched } from './batch.js';
import { prepared, statementName } from './prepared.js';

describe('batched', () => {
  it('runs the calls of one turn together, in order, and later calls in a new batch', async () => {
    const batches: number[][] = [];
    const double = batched(async (xs: number[]) => (batches.push(xs), xs.map((x) => x * 2)));
    expect(await Promise.all([double(1), double(2), double(3)])).toEqual([2, 4, 6]);
    expect(await double(4)).toBe(8);
    expect(batches).toEqual([[1, 2, 3], [4]]);
  });

  it('splits at the maximum batch size', async () => {
    const sizes: number[] = [];
    const id = batched(async (xs: number[]) => (sizes.push(xs.length), xs), 2);
    expect(await Promise.all([1, 2, 3, 4, 5].map(id))).toEqual([1, 2, 3, 4, 5]);
    expect(sizes).toEqual([2, 2, 1]);
  });

  it('fails every caller of a failed batch when each fails alone too, and later calls go through', async () => {
    let fail = true;
    const f = batched(async (xs: number[]) => {
      if (fail) throw new Error('database down');
      return xs;
    });
    const first = await Promise.allSettled([f(1), f(2)]);
    expect(first.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await f(3)).toBe(3);
  });

  it('runs the members of a failed batch alone, so only the one that breaks it fails', async () => {
    const runs: number[][] = [];
    const f = batched(async (xs: number[]) => {
      runs.push(xs);
      if (xs.includes(0)) throw new Error('invalid input value');
      return xs.map((x) => x * 10);
    });
    const settled = await Promise.allSettled([f(1), f(0), f(2)]);
    expect(settled.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([10, 'invalid input value', 20]);
    expect(runs).toEqual([[1, 0, 2], [1], [0], [2]]);
  });

  it('rejects a batch whose run answers the wrong number of results', async () => {
    const f = batched(async (xs: number[]) => xs.slice(1));
    await expect(Promise.all([f(1), f(2)])).rejects.toThrow(/1 results for 2 inputs/);
  });
});

describe('prepared', () => {
  it('names a text by its content: the same text the same name, another text another', () => {
    const a = prepared('SELECT 1 WHERE $1', [1]);
    expect(a).toEqual({ name: statementName('SELECT 1 WHERE $1'), text: 'SELECT 1 WHERE $1', values: [1] });
    expect(a.name).toMatch(/^z_[0-9a-f]{24}$/);
    expect(statementName('SELECT 2')).not.toBe(a.name);
  });
});
