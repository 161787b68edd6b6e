import type { Client } from 'pg';

/**
 * The data set of the policy benchmark, in the shape of OpenZiti's own performance tests
 * (`tests/model_sdk_performance_test.go`, "large"): 100,000 identities, 2,000 services, 500 edge
 * routers, 250 policies of each kind. Each entity carries 1 to 5 role attributes from a pool of a
 * few hundred; policies select by 1 to 3 attributes (AnyOf mostly, AllOf sometimes); a few select
 * `#all`. Written straight into the schemas (identity-auth's identities and policy's tables), then
 * the policy context's derived links are rebuilt from the role lists.
 */

export interface SeedShape {
  identities: number;
  services: number;
  edgeRouters: number;
  policiesPerKind: number;
  attributePool: number;
  /** Identities that also carry the `fanout` attribute (the fan-out measurement grants them a service). */
  fanoutIdentities: number;
  /** Service policies that also name the measured user with `@id` (so it reaches hundreds of services). */
  userPolicies: number;
}

export const DEFAULT_SHAPE: SeedShape = {
  identities: 100_000,
  services: 2_000,
  edgeRouters: 500,
  policiesPerKind: 250,
  attributePool: 300,
  fanoutIdentities: 10_000,
  userPolicies: 60,
};

/** Deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pad = (n: number, w = 6) => String(n).padStart(w, '0');

export interface Seeded {
  fanoutPolicyId: string;
  fanoutServiceIds: [string, string];
  fanoutIdentityIds: string[];
}

async function insertJson(pg: Client, table: string, columns: [string, string][], rows: Record<string, unknown>[], batch = 10_000): Promise<void> {
  const names = columns.map(([c]) => `"${c}"`).join(', ');
  const defs = columns.map(([c, t]) => `"${c}" ${t}`).join(', ');
  for (let i = 0; i < rows.length; i += batch) {
    await pg.query(`INSERT INTO ${table} (${names}) SELECT ${names} FROM jsonb_to_recordset($1::jsonb) AS x(${defs})`, [JSON.stringify(rows.slice(i, i + batch))]);
  }
}

/** Writes the data set. `userId` is the measured identity (created through the API beforehand). */
export async function seed(pg: Client, shape: SeedShape, userId: string, log: (m: string) => void): Promise<Seeded> {
  const rnd = prng(20261122);
  const pick = (n: number) => Math.floor(rnd() * n);
  const attrs = (prefix: string, min: number, max: number) => {
    const n = min + pick(max - min + 1);
    const out = new Set<string>();
    while (out.size < n) out.add(`${prefix}-${pick(shape.attributePool)}`);
    return [...out];
  };

  const identities = Array.from({ length: shape.identities }, (_, i) => {
    const roleAttributes = attrs('ia', 1, 5);
    if (i < shape.fanoutIdentities) roleAttributes.push('fanout');
    return { id: `bi${pad(i)}`, name: `bench-identity-${pad(i)}`, type_id: 'Default', role_attributes: roleAttributes };
  });
  await insertJson(pg, 'identity_auth.identities', [['id', 'text'], ['name', 'text'], ['type_id', 'text'], ['role_attributes', 'text[]']], identities);
  await insertJson(pg, 'policy.identities', [['id', 'text'], ['name', 'text'], ['type_id', 'text'], ['role_attributes', 'text[]']], identities);
  log(`seeded ${identities.length} identities (identity-auth and the policy projection)`);

  const services = Array.from({ length: shape.services }, (_, i) => ({ id: `bs${pad(i)}`, name: `bench-service-${pad(i)}`, role_attributes: attrs('sa', 1, 5) }));
  services.push({ id: 'bs-fanout-0', name: 'bench-fanout-0', role_attributes: [] }, { id: 'bs-fanout-1', name: 'bench-fanout-1', role_attributes: [] });
  await insertJson(pg, 'policy.services', [['id', 'text'], ['name', 'text'], ['role_attributes', 'text[]']], services);
  const routers = Array.from({ length: shape.edgeRouters }, (_, i) => ({ id: `br${pad(i)}`, name: `bench-router-${pad(i)}`, kind: 'edge', role_attributes: attrs('ra', 1, 5) }));
  await insertJson(pg, 'policy.routers', [['id', 'text'], ['name', 'text'], ['kind', 'text'], ['role_attributes', 'text[]']], routers);
  log(`seeded ${services.length} services and ${routers.length} edge routers`);

  const roles = (prefix: string, all: boolean) => (all ? ['#all'] : attrs(prefix, 1, 3).map((a) => `#${a}`));
  const semantic = () => (rnd() < 0.7 ? 'AnyOf' : 'AllOf');
  const sps = Array.from({ length: shape.policiesPerKind }, (_, i) => {
    const identityRoles = roles('ia', i === 0);
    if (i >= 2 && i < 2 + shape.userPolicies) identityRoles.push(`@${userId}`);
    return {
      id: `bsp${pad(i)}`, name: `bench-sp-${pad(i)}`, type: i % 4 === 3 ? 'Bind' : 'Dial', semantic: semantic(),
      identity_roles: identityRoles, service_roles: roles('sa', i === 1), posture_check_roles: [],
    };
  });
  sps.push({ id: 'bsp-fanout', name: 'bench-sp-fanout', type: 'Dial', semantic: 'AnyOf', identity_roles: ['#fanout'], service_roles: ['@bs-fanout-0'], posture_check_roles: [] });
  await insertJson(pg, 'policy.service_policies', [['id', 'text'], ['name', 'text'], ['type', 'text'], ['semantic', 'text'], ['identity_roles', 'text[]'], ['service_roles', 'text[]'], ['posture_check_roles', 'text[]']], sps);
  const erps = Array.from({ length: shape.policiesPerKind }, (_, i) => ({
    id: `berp${pad(i)}`, name: `bench-erp-${pad(i)}`, semantic: semantic(), identity_roles: roles('ia', i === 0), edge_router_roles: roles('ra', i === 1),
  }));
  await insertJson(pg, 'policy.edge_router_policies', [['id', 'text'], ['name', 'text'], ['semantic', 'text'], ['identity_roles', 'text[]'], ['edge_router_roles', 'text[]']], erps);
  const serps = Array.from({ length: shape.policiesPerKind }, (_, i) => ({
    id: `bserp${pad(i)}`, name: `bench-serp-${pad(i)}`, semantic: semantic(), service_roles: roles('sa', i === 0), edge_router_roles: roles('ra', i === 1),
  }));
  await insertJson(pg, 'policy.service_edge_router_policies', [['id', 'text'], ['name', 'text'], ['semantic', 'text'], ['service_roles', 'text[]'], ['edge_router_roles', 'text[]']], serps);
  log(`seeded ${sps.length} service policies, ${erps.length} edge router policies, ${serps.length} service edge router policies`);

  return {
    fanoutPolicyId: 'bsp-fanout',
    fanoutServiceIds: ['bs-fanout-0', 'bs-fanout-1'],
    fanoutIdentityIds: identities.slice(0, shape.fanoutIdentities).map((i) => i.id),
  };
}
