import { uniqueName, type EdgeApi, type Query } from '../support/clients.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectError, expectList } from '../support/envelope.js';
import type { HttpResponse } from '../support/http.js';

/** Listing identities: ZitiQL filter, sort, paging and role filters (reference §4). */

const ctl = useController();
failOnConformanceProblems();

/** 15 identities named `<P>-00` … `<P>-14` (P unique to this run). */
const P = uniqueName('lst');
const N = 15;
interface Made {
  id: string;
  name: string;
  isAdmin: boolean;
  roleAttributes: string[];
  externalId: string | null;
  tags: { parity: string };
}
const made: Made[] = [];
const attrsOf = (i: number) => [i % 2 === 0 ? 'a' : undefined, i % 3 === 0 ? 'b' : undefined, 'all-of-them'].filter(Boolean) as string[];
const MAX_INT64 = 9223372036854775807; // as a double: 2^63, which is also what 9223372036854775807 parses to

let mgmt: EdgeApi;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  for (let i = 0; i < N; i++) {
    const name = `${P}-${String(i).padStart(2, '0')}`;
    const m = {
      name,
      isAdmin: i % 5 === 0,
      roleAttributes: attrsOf(i),
      externalId: i % 4 === 0 ? `${P}-ext-${i}` : null,
      tags: { parity: i % 2 === 0 ? 'even' : 'odd' },
    };
    const res = await mgmt.identities.create({ ...m, type: 'Default' });
    made.push({ ...m, id: expectCreated(res, 'identities') });
  }
});

const mine = `name contains "${P}-"`;
async function list(q: Query): Promise<HttpResponse> {
  const res = await mgmt.identities.list(q);
  expectList(res);
  return res;
}
const names = (res: HttpResponse) => res.body.data.map((d: { name: string }) => d.name);
const sortedNames = (pred: (m: Made) => boolean = () => true) => made.filter(pred).map((m) => m.name).sort();

describe('filter', () => {
  it('name = "x" → exactly that identity', async () => {
    const res = await list({ filter: `name = "${made[3].name}"` });
    expect(names(res)).toEqual([made[3].name]);
    expect(res.body.data[0].id).toBe(made[3].id);
  });

  it('name contains "x" → all of them, totalCount counted before paging', async () => {
    const res = await list({ filter: mine, limit: 100 });
    expect(names(res).sort()).toEqual(sortedNames());
    expect(res.body.meta.pagination.totalCount).toBe(N);
  });

  it('isAdmin = false', async () => {
    const res = await list({ filter: `${mine} and isAdmin = false`, limit: 100 });
    expect(names(res).sort()).toEqual(sortedNames((m) => !m.isAdmin));
  });

  it('anyOf(roleAttributes) = "a"', async () => {
    const res = await list({ filter: `anyOf(roleAttributes) = "a" and ${mine}`, limit: 100 });
    expect(names(res).sort()).toEqual(sortedNames((m) => m.roleAttributes.includes('a')));
  });

  it('id = "x" or name = "y" (the CLI form)', async () => {
    const res = await list({ filter: `id = "${made[1].id}" or name = "${made[2].name}"` });
    expect(names(res).sort()).toEqual([made[1].name, made[2].name].sort());
  });

  it('icontains with a leading space in the filter (ZAC)', async () => {
    const res = await list({ filter: ` name icontains "${P.toUpperCase()}-0"`, limit: 100 });
    expect(names(res).sort()).toEqual(sortedNames((m) => m.name.startsWith(`${P}-0`)));
  });

  it('in [..] and createdAt > datetime(..)', async () => {
    const res = await list({ filter: `name in ["${made[4].name}", "${made[5].name}"] and createdAt > datetime(2020-01-01T00:00:00Z)` });
    expect(names(res).sort()).toEqual([made[4].name, made[5].name].sort());
  });

  const idx = (m: Made) => Number(m.name.slice(-2));
  it.each<[string, string, (m: Made) => boolean]>([
    ['keywords in any case', `name CONTAINS "${P}-1" AND isAdmin = FALSE`, (m) => m.name.startsWith(`${P}-1`) && !m.isAdmin],
    ['or binds looser than and', `name = "${P}-01" or name = "${P}-02" and isAdmin = true`, (m) => idx(m) === 1],
    ['parentheses', `(name = "${P}-01" or name = "${P}-05") and isAdmin = true`, (m) => idx(m) === 5],
    ['not in', `name not in ["${P}-00", "${P}-01"]`, (m) => idx(m) > 1],
    ['string ranges', `name >= "${P}-03" and name < "${P}-06"`, (m) => idx(m) >= 3 && idx(m) < 6],
    ['between datetimes', 'createdAt between datetime(2000-01-01T00:00:00Z) and datetime(2100-01-01T00:00:00.000Z)', () => true],
    ['= null', 'externalId = null', (m) => m.externalId === null],
    ['!= null', 'externalId != null', (m) => m.externalId !== null],
    ['tags.<name>', 'tags.parity = "odd"', (m) => m.tags.parity === 'odd'],
    ['allOf(set)', 'allOf(roleAttributes) = "all-of-them"', (m) => m.roleAttributes.every((a) => a === 'all-of-them')],
    ['not anyOf(set)', 'not anyOf(roleAttributes) = "a"', (m) => !m.roleAttributes.includes('a')],
    ['count(set)', 'count(roleAttributes) = 3', (m) => m.roleAttributes.length === 3],
    ['not contains', `name not contains "${P}-1"`, (m) => !m.name.startsWith(`${P}-1`)],
  ])('%s: %s', async (_what, filter, pred) => {
    const res = await list({ filter: `(${filter}) and ${mine}`, limit: -1 });
    expect(names(res).sort()).toEqual(sortedNames(pred));
  });

  it('exposes meta.filterableFields', async () => {
    const res = await list({ filter: mine });
    expect(res.body.meta.filterableFields).toEqual(expect.arrayContaining(['id', 'name', 'isAdmin', 'roleAttributes', 'createdAt', 'updatedAt']));
  });
});

describe('sort and paging', () => {
  it('sort=name desc', async () => {
    const res = await list({ filter: mine, sort: 'name desc', limit: 100 });
    expect(names(res)).toEqual(sortedNames().reverse());
  });

  it('sort=name  asc with two spaces (ZAC)', async () => {
    const res = await list({ filter: mine, sort: 'name  asc', limit: 100 });
    expect(names(res)).toEqual(sortedNames());
  });

  it('limit and offset page through the sorted result', async () => {
    const res = await list({ filter: mine, sort: 'name', limit: 5, offset: 5 });
    expect(names(res)).toEqual(sortedNames().slice(5, 10));
    expect(res.body.meta.pagination).toEqual({ limit: 5, offset: 5, totalCount: N });
  });

  it('an offset past the end → empty data, totalCount still counted', async () => {
    const res = await list({ filter: mine, offset: 100 });
    expect(res.body.data).toEqual([]);
    expect(res.body.meta.pagination).toEqual({ limit: 10, offset: 100, totalCount: N });
  });

  it('default limit is 10, offset 0', async () => {
    const res = await list({ filter: mine });
    expect(res.body.data).toHaveLength(10);
    expect(res.body.meta.pagination).toEqual({ limit: 10, offset: 0, totalCount: N });
  });

  it('limit=1000 is capped at 500', async () => {
    const res = await list({ filter: mine, limit: 1000 });
    expect(res.body.meta.pagination.limit).toBe(500);
    expect(res.body.data).toHaveLength(N);
  });

  it('limit=0 falls back to 10', async () => {
    const res = await list({ filter: mine, limit: 0 });
    expect(res.body.meta.pagination.limit).toBe(10);
  });

  it('limit=-1 is unlimited (meta limit = max int64)', async () => {
    const res = await list({ filter: mine, limit: -1 });
    expect(res.body.data).toHaveLength(N);
    expect(res.body.meta.pagination.limit).toBe(MAX_INT64);
  });

  it('limit below -1 falls back to 10; offset above 100000 is capped', async () => {
    expect((await list({ filter: mine, limit: -5 })).body.meta.pagination.limit).toBe(10);
    const res = await list({ filter: mine, offset: 250000 });
    expect(res.body.meta.pagination).toEqual({ limit: 10, offset: 100000, totalCount: N });
    expect(res.body.data).toEqual([]);
  });

  it('limit none inside the filter is unlimited', async () => {
    const res = await list({ filter: `${mine} limit none` });
    expect(res.body.data).toHaveLength(N);
    expect(res.body.meta.pagination.limit).toBe(MAX_INT64);
  });

  it('sorts on several fields: sort=isAdmin desc, name', async () => {
    const res = await list({ filter: mine, sort: 'isAdmin desc, name', limit: 100 });
    expect(names(res)).toEqual([...sortedNames((m) => m.isAdmin), ...sortedNames((m) => !m.isAdmin)]);
  });

  it('sort, skip and limit inside the filter beat the query parameters', async () => {
    const res = await list({ filter: `${mine} sort by name desc skip 2 limit 3`, sort: 'name asc', limit: 10, offset: 0 });
    expect(names(res)).toEqual(sortedNames().reverse().slice(2, 5));
    expect(res.body.meta.pagination).toEqual({ limit: 3, offset: 2, totalCount: N });
  });

  it('without a filter the list counts every identity (the default admin included)', async () => {
    const res = await list({ limit: -1 });
    expect(res.body.meta.pagination.totalCount).toBe(res.body.data.length);
    expect(res.body.data.some((d: { isDefaultAdmin: boolean }) => d.isDefaultAdmin)).toBe(true);
  });
});

describe('bad queries', () => {
  it.each([
    ['a syntax error', 'name = '],
    ['an unknown field', 'bogusField = "x"'],
    ['a set symbol used bare', 'roleAttributes = "a"'],
    ['a type mismatch', 'isAdmin = "yes"'],
  ])('%s in the filter → 400 INVALID_FILTER', async (_what, filter) => {
    expectError(await mgmt.identities.list({ filter }), 400, 'INVALID_FILTER');
  });

  it('an unknown sort field → 400 INVALID_SORT_IDENTIFIER', async () => {
    expectError(await mgmt.identities.list({ sort: 'bogusField desc' }), 400, 'INVALID_SORT_IDENTIFIER');
  });
});

describe('roleFilter and roleSemantic', () => {
  const has = (...attrs: string[]) => (m: Made) => attrs.every((a) => m.roleAttributes.includes(a));
  const hasAny = (...attrs: string[]) => (m: Made) => attrs.some((a) => m.roleAttributes.includes(a));

  it('roleFilter=#a&roleFilter=#b (AllOf by default) → identities with both', async () => {
    const res = await list({ roleFilter: ['#a', '#b'], filter: mine, limit: 100 });
    expect(names(res).sort()).toEqual(sortedNames(has('a', 'b')));
  });

  it('roleSemantic=AnyOf → identities with either', async () => {
    const res = await list({ roleFilter: ['#a', '#b'], roleSemantic: 'AnyOf', filter: mine, limit: 100 });
    expect(names(res).sort()).toEqual(sortedNames(hasAny('a', 'b')));
  });

  it('roleFilter=@<id> → that identity', async () => {
    const res = await list({ roleFilter: [`@${made[7].id}`], filter: mine });
    expect(names(res)).toEqual([made[7].name]);
  });

  it('roleFilter=#all → every identity, then the filter applies', async () => {
    const res = await list({ roleFilter: ['#all'], filter: `${mine} and isAdmin = true`, limit: 100 });
    expect(names(res).sort()).toEqual(sortedNames((m) => m.isAdmin));
  });
});
