import { type EdgeApi, uniqueName } from '../support/clients.js';
import { findings, run } from '../support/clients-integrity.js';
import { policyBuilder } from '../support/clients-policy.js';
import { sessionClients } from '../support/clients-session.js';
import { failOnConformanceProblems } from '../support/conformance.js';
import { useController } from '../support/controller.js';
import { expectCreated, expectEmpty, expectError, expectFieldError, expectList, expectSuccess } from '../support/envelope.js';

/** Management posture check types, posture checks (every kind), role attributes (reference §6.10, §6.11, §4.1). */

const ctl = useController();
failOnConformanceProblems();

let mgmt: EdgeApi;
let api: ReturnType<typeof sessionClients>;
beforeAll(async () => {
  mgmt = await ctl().adminSession('management');
  api = sessionClients(mgmt);
});

const KINDS: Record<string, Record<string, unknown>> = {
  OS: { operatingSystems: [{ type: 'Windows', versions: ['>=10.0.0 <11.0.0'] }, { type: 'Linux', versions: [] }] },
  DOMAIN: { domains: ['corp.example'] },
  MAC: { macAddresses: ['AA:BB:CC:DD:EE:FF'] },
  PROCESS: { process: { osType: 'Windows', path: 'C:\\agent.exe', hashes: ['ABCDEF'], signerFingerprint: 'FF00' } },
  PROCESS_MULTI: { semantic: 'AnyOf', processes: [{ osType: 'Linux', path: '/usr/bin/agent', hashes: [], signerFingerprints: [] }] },
  MFA: { timeoutSeconds: 300, promptOnWake: true, promptOnUnlock: false, ignoreLegacyEndpoints: false },
};

async function create(typeId: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await api.postureChecks.create({ name: uniqueName(`pc-${typeId}`), typeId, roleAttributes: ['pc-attr'], ...KINDS[typeId], ...extra });
  return expectCreated(res, 'posture-checks');
}

async function detail(id: string): Promise<Record<string, any>> {
  const res = await api.postureChecks.get(id);
  expectSuccess(res);
  return res.body.data;
}

describe('posture check types', () => {
  it('lists the built-in records of §6.10 (no MFA record)', async () => {
    const res = await api.postureCheckTypes.list();
    expectList(res);
    const byId = Object.fromEntries((res.body.data as { id: string; name: string }[]).map((t) => [t.id, t.name]));
    expect(byId).toEqual({
      OS: 'Operating System Check',
      PROCESS: 'Process Check',
      DOMAIN: 'Windows Domain Check',
      MAC: 'MAC Address Check',
      PROCESS_MULTI: 'Process Multi Check',
    });
    expect(res.body.meta.pagination).toEqual({ limit: 10, offset: 0, totalCount: 5 });
  });

  it('details one type with its operating systems; filters by name; 404 for unknown', async () => {
    const res = await api.postureCheckTypes.get('DOMAIN');
    expectSuccess(res);
    expect(res.body.data).toMatchObject({ id: 'DOMAIN', operatingSystems: [{ type: 'Windows' }], _links: { self: { href: './posture-check-types/DOMAIN' } } });
    const filtered = await api.postureCheckTypes.list({ filter: 'name contains "Process"' });
    expect((filtered.body.data as { id: string }[]).map((t) => t.id).sort()).toEqual(['PROCESS', 'PROCESS_MULTI']);
    expectError(await api.postureCheckTypes.get('MFA'), 404, 'NOT_FOUND');
  });
});

describe('create and detail, every kind', () => {
  it.each(Object.keys(KINDS))('%s: 201, then the detail carries its fields, version 1 and the links', async (typeId) => {
    const id = await create(typeId);
    const d = await detail(id);
    expect(d).toMatchObject({ id, typeId, version: 1, roleAttributes: ['pc-attr'], tags: {}, ...KINDS[typeId] });
    expect(d._links).toEqual({ self: { href: `./posture-checks/${id}` } });
  });
});

describe('validation', () => {
  it('refuses a missing or unknown typeId', async () => {
    expectFieldError(await api.postureChecks.create({ name: uniqueName('pc') }), 'typeId');
    expectFieldError(await api.postureChecks.create({ name: uniqueName('pc'), typeId: 'NOPE' }), 'typeId');
  });

  it('ignores fields of another kind, and refuses missing required fields and empty lists', async () => {
    const other = await api.postureChecks.create({ name: uniqueName('pc'), typeId: 'DOMAIN', domains: ['x'], macAddresses: ['y'] });
    expect(other.status).toBe(201);
    expect((await api.postureChecks.get(other.body.data.id)).body.data).not.toHaveProperty('macAddresses');
    expectFieldError(await api.postureChecks.create({ name: uniqueName('pc'), typeId: 'MAC' }), 'macAddresses');
    expectFieldError(await api.postureChecks.create({ name: uniqueName('pc'), typeId: 'DOMAIN', domains: [] }));
    expectFieldError(await api.postureChecks.create({ name: uniqueName('pc'), typeId: 'PROCESS_MULTI', processes: [{ osType: 'Linux', path: '/a' }] }), 'semantic');
  });

  it('refuses bad OS types, OS version ranges (blang/semver syntax) and semantics', async () => {
    expectFieldError(await api.postureChecks.create({ name: uniqueName('pc'), typeId: 'OS', operatingSystems: [{ type: 'BeOS', versions: [] }] }));
    const res = await api.postureChecks.create({ name: uniqueName('pc'), typeId: 'OS', operatingSystems: [{ type: 'Windows', versions: ['^10.0.0'] }] });
    expectFieldError(res, 'operatingSystems[Windows][0]');
    expectFieldError(await api.postureChecks.create({ name: uniqueName('pc'), typeId: 'PROCESS_MULTI', semantic: 'OneOf', processes: [{ osType: 'Linux', path: '/a' }] }), 'semantic');
  });

  it('refuses role attributes with selector prefixes and duplicate names', async () => {
    expectFieldError(await api.postureChecks.create({ name: uniqueName('pc'), typeId: 'DOMAIN', domains: ['a'], roleAttributes: ['#x'] }), 'roleAttributes');
    const name = uniqueName('dup');
    expectCreated(await api.postureChecks.create({ name, typeId: 'DOMAIN', domains: ['a'] }), 'posture-checks');
    const again = await api.postureChecks.create({ name, typeId: 'DOMAIN', domains: ['b'] });
    expectFieldError(again, 'name');
    expect(again.body.error.cause.reason).toBe('name must be unique');
  });
});

describe('update, patch, delete', () => {
  it('PUT replaces every field and bumps the version; the kind can not change', async () => {
    const id = await create('MFA');
    expectEmpty(await api.postureChecks.update(id, { name: uniqueName('put'), typeId: 'MFA', timeoutSeconds: 60 }));
    const d = await detail(id);
    expect(d).toMatchObject({ version: 2, timeoutSeconds: 60, promptOnWake: false, promptOnUnlock: false, roleAttributes: [] });
    expectFieldError(await api.postureChecks.update(id, { name: uniqueName('put'), typeId: 'OS', operatingSystems: [{ type: 'Linux', versions: [] }] }), 'typeId');
  });

  it('PATCH changes only the given fields', async () => {
    const id = await create('MFA');
    const before = await detail(id);
    expectEmpty(await api.postureChecks.patch(id, { typeId: 'MFA', promptOnUnlock: true }));
    const d = await detail(id);
    expect(d).toMatchObject({ name: before.name, roleAttributes: ['pc-attr'], timeoutSeconds: 300, promptOnWake: true, promptOnUnlock: true, version: 2 });
    expectEmpty(await api.postureChecks.patch(id, { typeId: 'MFA', roleAttributes: ['other'] }));
    expect((await detail(id)).roleAttributes).toEqual(['other']);
  });

  it('DELETE → 200, then 404 on detail, update and delete', async () => {
    const id = await create('DOMAIN');
    expectEmpty(await api.postureChecks.delete(id));
    expectError(await api.postureChecks.get(id), 404, 'NOT_FOUND');
    expectError(await api.postureChecks.update(id, { name: 'x', typeId: 'DOMAIN', domains: ['a'] }), 404, 'NOT_FOUND');
    expectError(await api.postureChecks.delete(id), 404, 'NOT_FOUND');
  });
});

describe('lists', () => {
  it('filters by name and typeId and pages', async () => {
    const prefix = uniqueName('listed');
    for (const t of ['DOMAIN', 'DOMAIN', 'MAC']) {
      expectCreated(await api.postureChecks.create({ name: `${prefix}-${t}-${Math.random()}`, typeId: t, ...KINDS[t] }), 'posture-checks');
    }
    const res = await api.postureChecks.list({ filter: `name contains "${prefix}" and typeId = "DOMAIN"` });
    expectList(res);
    expect(res.body.data).toHaveLength(2);
    expect(res.body.meta.filterableFields).toEqual(expect.arrayContaining(['name', 'typeId', 'roleAttributes']));
    const page = await api.postureChecks.list({ filter: `name contains "${prefix}"`, limit: 1, offset: 1 });
    expect(page.body.meta.pagination).toEqual({ limit: 1, offset: 1, totalCount: 3 });
  });

  it('roleFilter selects by #attribute (AllOf/AnyOf) and @id', async () => {
    const a = await create('DOMAIN', { roleAttributes: ['rf-a', 'rf-b'] });
    const b = await create('DOMAIN', { roleAttributes: ['rf-a'] });
    const ids = async (q: Record<string, string | string[]>) => ((await api.postureChecks.list({ ...q, limit: -1 })).body.data as { id: string }[]).map((x) => x.id).sort();
    expect(await ids({ roleFilter: ['#rf-a', '#rf-b'] })).toEqual([a]);
    expect(await ids({ roleFilter: ['#rf-a', '#rf-b'], roleSemantic: 'AnyOf' })).toEqual([a, b].sort());
    expect(await ids({ roleFilter: [`@${b}`] })).toEqual([b]);
    expectFieldError(await api.postureChecks.list({ roleFilter: ['rf-a'] }), 'roleFilter');
  });
});

describe('role attributes', () => {
  it('lists the attributes posture checks declare, filtered by id, without paging', async () => {
    await create('DOMAIN', { roleAttributes: ['ra-one', 'ra-two'] });
    const res = await api.postureCheckRoleAttributes(`?filter=${encodeURIComponent('id contains "ra-" sort by id')}&limit=1`);
    expectList(res);
    expect(res.body.data).toEqual(['ra-one', 'ra-two']);
    expect(res.text).toContain('"limit":9223372036854775807');
  });

  it('reports usage by posture checks (with ids on request)', async () => {
    const id = await create('DOMAIN', { roleAttributes: ['usage-attr'] });
    const res = await api.postureCheckRoleAttributeUsage(`?filter=${encodeURIComponent('id = "usage-attr"')}&withIds=true`);
    expectList(res);
    expect(res.body.data).toEqual([
      { roleAttribute: 'usage-attr', usage: { postureChecks: { count: 1, ids: [id] }, servicePolicies: { count: 0, ids: [] } } },
    ]);
    const plain = await api.postureCheckRoleAttributeUsage(`?filter=${encodeURIComponent('id = "usage-attr"')}`);
    expect(plain.body.data[0].usage.postureChecks).toEqual({ count: 1 });
  });
});

describe('as service policies see them', () => {
  it('/service-policies/{id}/posture-checks renders every kind whole, also after the posture-check events arrived; the integrity check finds no difference', async () => {
    const attr = uniqueName('pc-linked');
    const ids = new Map<string, string>();
    for (const typeId of Object.keys(KINDS)) ids.set(typeId, await create(typeId, { roleAttributes: [attr] }));
    const sp = await policyBuilder(mgmt).servicePolicy('Dial', ['#all'], ['#all'], 'AllOf', [`#${attr}`]);
    const listed = async () => {
      const res = await mgmt.call('GET', `/service-policies/${sp}/posture-checks?limit=100`);
      expectList(res);
      return new Map((res.body.data as Record<string, any>[]).map((c) => [c.id as string, c]));
    };
    // Each item equals posture's own detail of the check (its kind's fields included).
    const check = async () => {
      const byId = await listed();
      expect([...byId.keys()].sort()).toEqual([...ids.values()].sort());
      for (const id of ids.values()) expect(byId.get(id)).toEqual(await detail(id));
      return byId;
    };
    const first = await check();
    for (const [typeId, id] of ids) expect(first.get(id)).toMatchObject({ typeId, ...KINDS[typeId] });
    // The posture-check.* events reach policy after the synchronous call and must not thin the projection.
    const updated = ids.get('DOMAIN')!;
    expectEmpty(await api.postureChecks.patch(updated, { typeId: 'DOMAIN', domains: ['other.example'] }));
    await new Promise((r) => setTimeout(r, 1500));
    await check();
    expect((await listed()).get(updated)).toMatchObject({ domains: ['other.example'], version: 2 });
    const r = await run(mgmt);
    expect(r.error).toBeNull();
    expect(findings(r, 'posture check')).toEqual([]);
    await check();
  });
});
