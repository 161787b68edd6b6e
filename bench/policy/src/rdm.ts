import { Metadata } from '@grpc/grpc-js';
import { createInProcessBus, createMemoryCache } from '@ziti/messaging';
import { rebuildDerivedLinks, runMigrations, startService } from '@ziti/policy';
import { GetRouterDataModelRequest, PolicyServiceClient, RouterDataModel } from '@ziti/proto';
import { holdProcessIdentities, internalTestClient } from '@ziti/service-kit';
import { createTestDatabase, testInfra } from '@ziti/test-kit';
import { Client } from 'pg';
import { prng } from './seed.js';

/**
 * `GetRouterDataModel` on a network of 10,000 identities, 2,000 services (a config each),
 * 1,000 service policies (1 to 3 attributes, AnyOf; each with a posture check) and 100 posture
 * checks: the time of a whole answer over gRPC and its encoded size.
 * `npm run build && tsc -p bench/policy/tsconfig.json && node bench/policy/dist/rdm.js`
 */
async function main(): Promise<void> {
  holdProcessIdentities();
  const db = await createTestDatabase((await testInfra()).databaseUrl);
  await runMigrations(db.url);
  const bus = createInProcessBus();
  const cache = createMemoryCache();
  const service = await startService({ databaseUrl: db.url, bus, cache, internalSecret: 'bench', http: { host: '127.0.0.1', port: 0 }, grpc: { host: '127.0.0.1', port: 0 } });
  const pg = new Client({ connectionString: db.url });
  await pg.connect();
  try {
    const rnd = prng(20261203);
    const attrs = (n: number) => Array.from({ length: 1 + Math.floor(rnd() * n) }, () => `a${Math.floor(rnd() * 300)}`);
    const ins = (table: string, cols: string, defs: string, rows: unknown[]) =>
      pg.query(`INSERT INTO policy.${table} (${cols}) SELECT ${cols} FROM jsonb_to_recordset($1::jsonb) AS x(${defs})`, [JSON.stringify(rows)]);
    await ins('identities', 'id, name, role_attributes', 'id text, name text, role_attributes text[]', Array.from({ length: 10_000 }, (_, i) => ({ id: `i${i}`, name: `identity-${i}`, role_attributes: attrs(5) })));
    await ins('configs', 'id, name, config_type_id, data', 'id text, name text, config_type_id text, data jsonb', Array.from({ length: 2_000 }, (_, i) => ({ id: `c${i}`, name: `config-${i}`, config_type_id: 'g7cIWbcGg', data: { protocol: 'tcp', address: `svc-${i}.internal`, port: 443 } })));
    await ins('services', 'id, name, role_attributes', 'id text, name text, role_attributes text[]', Array.from({ length: 2_000 }, (_, i) => ({ id: `s${i}`, name: `service-${i}`, role_attributes: attrs(3) })));
    await ins('service_configs', 'service_id, config_id, config_type_id, position', 'service_id text, config_id text, config_type_id text, position int', Array.from({ length: 2_000 }, (_, i) => ({ service_id: `s${i}`, config_id: `c${i}`, config_type_id: 'g7cIWbcGg', position: 0 })));
    await ins('posture_checks', 'id, name, type_id, role_attributes, detail', 'id text, name text, type_id text, role_attributes text[], detail jsonb', Array.from({ length: 100 }, (_, i) => ({ id: `pc${i}`, name: `check-${i}`, type_id: 'MAC', role_attributes: [`p${i % 10}`], detail: { id: `pc${i}`, typeId: 'MAC', macAddresses: ['aabbccddeeff'] } })));
    await ins('service_policies', 'id, name, type, semantic, identity_roles, service_roles, posture_check_roles', 'id text, name text, type text, semantic text, identity_roles text[], service_roles text[], posture_check_roles text[]',
      Array.from({ length: 1_000 }, (_, i) => ({ id: `sp${i}`, name: `policy-${i}`, type: i % 2 ? 'Bind' : 'Dial', semantic: 'AnyOf', identity_roles: attrs(3).map((a) => `#${a}`), service_roles: attrs(3).map((a) => `#${a}`), posture_check_roles: [`#p${i % 10}`] })));
    await ins('identity_service_configs', 'identity_id, service_id, config_type_id, config_id', 'identity_id text, service_id text, config_type_id text, config_id text', Array.from({ length: 1_000 }, (_, i) => ({ identity_id: `i${i}`, service_id: `s${i}`, config_type_id: 'g7cIWbcGg', config_id: `c${i}` })));
    await rebuildDerivedLinks(db.url);
    const links = (await pg.query(`SELECT (SELECT count(*) FROM policy.sp_identities) AS i, (SELECT count(*) FROM policy.sp_services) AS s`)).rows[0];
    const client = internalTestClient(PolicyServiceClient, service.grpcAddress, 'policy');
    const fetch = () => new Promise<RouterDataModel>((resolve, reject) => client.getRouterDataModel(GetRouterDataModelRequest.fromPartial({}), new Metadata(), (err, res) => (err ? reject(err) : resolve(res))));
    await fetch();
    const times: number[] = [];
    let m: RouterDataModel | undefined;
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      m = await fetch();
      times.push(performance.now() - t0);
    }
    const bytes = RouterDataModel.encode(m!).finish().length;
    console.log(JSON.stringify({
      identities: m!.identities.length, services: m!.services.length, servicePolicies: m!.servicePolicies.length, postureChecks: m!.postureChecks.length,
      spIdentityLinks: Number(links.i), spServiceLinks: Number(links.s),
      msMedian: Math.round(times.sort((a, b) => a - b)[2]), msAll: times.map((t) => Math.round(t)), encodedBytes: bytes,
    }));
    client.close();
  } finally {
    await pg.end();
    await service.stop();
    await bus.close();
    await cache.close();
    await db.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
