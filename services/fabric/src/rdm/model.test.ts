import type { RouterDataModel } from '@ziti/proto';
import { buildModel, diffModels, orderedEntities, patchModel } from './model.js';
import { eventsOf } from './wire.js';

const base = (): RouterDataModel => ({
  configTypes: [{ id: 'ct1', name: 'intercept.v1' }],
  configs: [{ id: 'c1', typeId: 'ct1', name: 'cfg', dataJson: '{"a":1}' }],
  services: [{ id: 's1', name: 'svc', encryptionRequired: true, configIds: ['c1'] }],
  servicePolicies: [{ id: 'p1', name: 'dial', policyType: 'Dial', identityIds: ['i1', 'i2'], serviceIds: ['s1'], postureCheckIds: [] }],
  identities: [
    { id: 'i1', name: 'one', disabled: false, defaultHostingPrecedence: '', defaultHostingCost: 0, serviceHostingPrecedences: {}, serviceHostingCosts: {}, appDataJson: '', serviceConfigs: {} },
    { id: 'i2', name: 'two', disabled: false, defaultHostingPrecedence: '', defaultHostingCost: 0, serviceHostingPrecedences: {}, serviceHostingCosts: {}, appDataJson: '', serviceConfigs: {} },
  ],
  postureChecks: [{ id: 'pc1', name: 'domain', typeId: 'DOMAIN', detailJson: '{"domains":["example.com"]}' }],
});

describe('router data model', () => {
  it('orders a full state so that what others refer to comes first, and merges a policy\'s links', () => {
    const entities = orderedEntities(buildModel(base(), []));
    const kinds = entities.map((e) => e.kind);
    expect(kinds.indexOf('identity')).toBeLessThan(kinds.indexOf('servicePolicy'));
    expect(kinds.indexOf('servicePolicy')).toBeLessThan(kinds.indexOf('policyLink'));
    const events = eventsOf(entities.map((entity) => ({ action: 'create' as const, entity })));
    const changes = events.filter((e) => e.servicePolicyChange).map((e) => e.servicePolicyChange!);
    expect(changes).toEqual([
      { policyId: 'p1', relatedEntityIds: ['i1', 'i2'], relatedEntityType: 2, add: true },
      { policyId: 'p1', relatedEntityIds: ['s1'], relatedEntityType: 1, add: true },
    ]);
    expect(events.find((e) => e.postureCheck)!.postureCheck!.domains).toEqual({ domains: ['example.com'] });
  });

  it('diffs two models into creates, updates and link removals, removals before what they refer to', () => {
    const before = buildModel(base(), []);
    const next = base();
    next.identities[0].name = 'renamed';
    next.servicePolicies[0].identityIds = ['i1'];
    next.identities = next.identities.filter((i) => i.id !== 'i2');
    const changes = diffModels(before, buildModel(next, []));
    expect(changes.map((c) => `${c.action}:${c.entity.kind}:${c.entity.id}`)).toEqual(['update:identity:i1', 'delete:policyLink:p1/identity/i2', 'delete:identity:i2']);
    const events = eventsOf(changes);
    expect(events[1].servicePolicyChange).toEqual({ policyId: 'p1', relatedEntityIds: ['i2'], relatedEntityType: 2, add: false });
  });

  it('finds nothing to send when nothing changed, whatever order maps arrive in', () => {
    const a = base();
    const b = base();
    b.identities[0].serviceHostingCosts = { y: 2, x: 1 };
    a.identities[0].serviceHostingCosts = { x: 1, y: 2 };
    expect(diffModels(buildModel(a, []), buildModel(b, []))).toEqual([]);
  });

  it('patches a model with a partial read: named entities replaced or gone, a policy\'s links replaced, only touched keys diffed', () => {
    const before = buildModel(base(), []);
    const partial = base();
    partial.configTypes = [];
    partial.configs = [];
    partial.services = [];
    partial.postureChecks = [];
    partial.identities = [];
    partial.servicePolicies[0].identityIds = ['i1'];
    // Named: the policy (answered, now selecting i1 only) and identity i2 (not answered: deleted).
    const named = new Map([['servicePolicy' as const, new Set(['p1'])], ['identity' as const, new Set(['i2'])]]);
    const { model, touched } = patchModel(before, named, buildModel(partial, []));
    expect(model.has('identity:i1')).toBe(true);
    expect(model.has('identity:i2')).toBe(false);
    expect(model.has('policyLink:p1/identity/i2')).toBe(false);
    const changes = diffModels(before, model, false, touched);
    expect(changes.map((c) => `${c.action}:${c.entity.kind}:${c.entity.id}`)).toEqual(['delete:policyLink:p1/identity/i2', 'delete:identity:i2']);
    expect(diffModels(before, model, false)).toEqual(changes);
  });

  it('carries revocations: a new one is a create with its type, expiry and cutoff; an expired one (no longer read) is deleted', () => {
    const empty = { ...base(), configTypes: [], configs: [], services: [], servicePolicies: [], identities: [], postureChecks: [] };
    const jti = { id: 'j1', type: 'JTI', expiresAtMs: 2_000_000_000_000, issuedBeforeMs: 0 };
    const ident = { id: 'i1', type: 'IDENTITY', expiresAtMs: 2_000_000_000_000, issuedBeforeMs: 1_900_000_000_000 };
    const before = buildModel(empty, [], [jti]);
    // A partial read of the named revocation: i1 is new, j1 expired (not answered).
    const named = new Map([['revocation' as const, new Set(['i1', 'j1'])]]);
    const { model, touched } = patchModel(before, named, buildModel(empty, [], [ident]));
    const changes = diffModels(before, model, false, touched);
    expect(changes.map((c) => `${c.action}:${c.entity.kind}:${c.entity.id}`)).toEqual(['create:revocation:i1', 'delete:revocation:j1']);
    const [created, deleted] = eventsOf(changes);
    expect(created!.revocation).toEqual({ id: 'i1', type: 'IDENTITY', ExpiresAt: new Date(2_000_000_000_000), issuedBefore: new Date(1_900_000_000_000) });
    expect(deleted!.revocation).toMatchObject({ id: 'j1', type: 'JTI', issuedBefore: undefined });
  });
});
