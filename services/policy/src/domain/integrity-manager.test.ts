import type { IdentityRecord, PostureCheckRecord } from './model.js';
import { PROJECTION_GRACE_MS, canonicalJson, identityDifferences, postureCheckDifferences, settled } from './integrity-manager.js';

const at = new Date('2026-01-01T00:00:00.000Z');
const identity: IdentityRecord = {
  id: 'i1', name: 'alice', roleAttributes: ['a', 'b'], isAdmin: false, isDefaultAdmin: false, disabled: false, typeId: 'Default',
  externalId: null, authPolicyId: 'default', isSystem: false, tags: { k: 1, n: { x: [1, 2] } }, createdAt: at, updatedAt: at,
  defaultHostingPrecedence: 'required', defaultHostingCost: 5, serviceHostingPrecedences: { s1: 'failed' }, serviceHostingCosts: { s1: 9 }, appData: { a: 1, b: [2] },
};
const source = {
  identityId: 'i1', name: 'alice', roleAttributes: ['b', 'a', 'a'], isAdmin: false, disabled: false, deleted: false, updatedAt: at,
  typeId: 'Default', isDefaultAdmin: false, externalId: null, authPolicyId: 'default', tags: { n: { x: [1, 2] }, k: 1 },
};

describe('integrity: projection comparison', () => {
  it('finds no difference when only order and duplicates of role attributes or key order of tags differ', () => {
    expect(identityDifferences(identity, source)).toEqual([]);
    expect(identityDifferences(identity, { ...source, typeId: undefined, authPolicyId: undefined })).toEqual([]);
  });

  it('names every differing field with the stored and the source value', () => {
    const stored = { ...identity, name: 'mallory', roleAttributes: ['a'], isAdmin: true, disabled: true, tags: { k: 2 } };
    expect(identityDifferences(stored, source)).toEqual([
      'name "mallory" ≠ "alice"',
      'roleAttributes [a] ≠ [a, b]',
      'isAdmin true ≠ false',
      'disabled true ≠ false',
      'tags {"k":2} ≠ {"k":1,"n":{"x":[1,2]}}',
    ]);
  });

  it("compares the router data model's fields when the source sends them", () => {
    const hosting = { defaultHostingPrecedence: 'required', defaultHostingCost: 5, serviceHostingPrecedences: { s1: 'failed' }, serviceHostingCosts: { s1: 9 }, appData: { b: [2], a: 1 } };
    expect(identityDifferences(identity, { ...source, ...hosting })).toEqual([]);
    expect(
      identityDifferences(identity, {
        ...source,
        defaultHostingPrecedence: 'default',
        defaultHostingCost: 0,
        serviceHostingPrecedences: {},
        serviceHostingCosts: { s1: 9, s2: 1 },
        appData: {},
      }),
    ).toEqual([
      'defaultHostingPrecedence "required" ≠ "default"',
      'defaultHostingCost 5 ≠ 0',
      'serviceHostingPrecedences {"s1":"failed"} ≠ {}',
      'serviceHostingCosts {"s1":9} ≠ {"s1":9,"s2":1}',
      'appData {"a":1,"b":[2]} ≠ {}',
    ]);
  });

  it('compares a posture check detail by content, and leaves out what the source does not send', () => {
    const pc: PostureCheckRecord = { id: 'p', name: 'os', typeId: 'OS', roleAttributes: [], version: 2, detail: { b: 1, a: [1] }, tags: {}, createdAt: at, updatedAt: at };
    const src = { postureCheckId: 'p', name: 'os', typeId: 'OS', roleAttributes: [], deleted: false, updatedAt: at };
    expect(postureCheckDifferences(pc, { ...src, version: 2, detail: { a: [1], b: 1 } })).toEqual([]);
    expect(postureCheckDifferences(pc, src)).toEqual([]);
    expect(postureCheckDifferences(pc, { ...src, version: 3, detail: { a: [2], b: 1 } })).toEqual(['version 2 ≠ 3', 'detail {"a":[1],"b":1} ≠ {"a":[2],"b":1}']);
  });

  it('judges equal versions at once, and a newer side only once it is older than the grace period', () => {
    const asOf = new Date(at.getTime() + 60_000);
    expect(settled(at, at, asOf)).toBe(true);
    const recent = new Date(asOf.getTime() - PROJECTION_GRACE_MS / 2);
    expect(settled(at, recent, asOf)).toBe(false);
    expect(settled(recent, at, asOf)).toBe(false);
    const old = new Date(asOf.getTime() - PROJECTION_GRACE_MS * 2);
    expect(settled(at, old, asOf)).toBe(true);
    expect(settled(old, at, asOf)).toBe(true);
  });

  it('writes canonical JSON with sorted keys', () => {
    expect(canonicalJson({ b: [{ d: 1, c: null }], a: 'x', u: undefined })).toBe('{"a":"x","b":[{"c":null,"d":1}]}');
  });
});
