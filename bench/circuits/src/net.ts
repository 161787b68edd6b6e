import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { RouterDouble } from '../../../test/support/router-double.js';
import { type RouterIdentity, enrollRouter } from '../../../test/support/router-enroll.js';
import type { Api } from '../../common/src/api.js';
import { pool, prng, until } from '../../common/src/load.js';

/** What the circuit phase needs: a router double hosting a terminator, and a user's Dial session. */
export interface SmallNetwork {
  router: RouterIdentity;
  double: RouterDouble;
  userId: string;
  /** The user's legacy API session token (the controller pushes it to the router). */
  userToken: string;
  serviceId: string;
  dialToken: string;
  dialPolicyId: string;
  /** An identity no policy selects, that the change measurement adds to and removes from a policy. */
  spareIdentityId: string;
}

/**
 * As `router-data-circuits.test.ts` builds it: an identity that can log in, a service requiring
 * encryption, Bind and Dial policies, edge router and service edge router policies, an edge
 * router enrolled as `ziti router enroll` does and connected as a router double, its terminator.
 */
export async function smallNetwork(api: Api, ctrlPort: number, tag: string): Promise<SmallNetwork> {
  const userId = await api.mgmt('POST', '/identities', { name: `${tag}-user`, type: 'User', isAdmin: false, roleAttributes: [`${tag}-users`] });
  const password = `Pw!${randomUUID()}A1`;
  await api.mgmt('POST', '/authenticators', { method: 'updb', identityId: userId, username: `${tag}-user`, password });
  const spareIdentityId = await api.mgmt('POST', '/identities', { name: `${tag}-spare`, type: 'User', isAdmin: false });
  const serviceId = await api.mgmt('POST', '/services', { name: `${tag}-svc`, roleAttributes: [`${tag}-svc`], encryptionRequired: true });
  await api.mgmt('POST', '/service-policies', { name: `${tag}-bind`, type: 'Bind', semantic: 'AnyOf', identityRoles: [`@${userId}`], serviceRoles: [`@${serviceId}`] });
  const dialPolicyId = await api.mgmt('POST', '/service-policies', { name: `${tag}-dial`, type: 'Dial', semantic: 'AnyOf', identityRoles: [`#${tag}-users`], serviceRoles: [`@${serviceId}`] });
  const routerId = await api.mgmt('POST', '/edge-routers', { name: `${tag}-er`, roleAttributes: [`${tag}-routers`], isTunnelerEnabled: false });
  await api.mgmt('POST', '/edge-router-policies', { name: `${tag}-erp`, semantic: 'AnyOf', identityRoles: [`#${tag}-users`], edgeRouterRoles: [`#${tag}-routers`] });
  await api.mgmt('POST', '/service-edge-router-policies', { name: `${tag}-serp`, semantic: 'AnyOf', serviceRoles: ['#all'], edgeRouterRoles: [`#${tag}-routers`] });
  const jwt = (await api.request('GET', `/edge/management/v1/edge-routers/${routerId}`)).body.data.enrollmentJwt as string;
  const router = await enrollRouter(jwt);
  const double = await RouterDouble.connect({ identity: router, host: '127.0.0.1', port: ctrlPort, heartbeatIntervalMs: 0 });
  await until(() => double.rdm.dataStates.length > 0, 'the first DataState');

  const userToken = await api.login(`${tag}-user`, password, 'client');
  await until(() => double.apiSessions.has(userToken), 'the API session pushed to the router');
  const session = async (type: 'Dial' | 'Bind') => {
    const r = await until(async () => {
      const s = await api.request('POST', '/edge/client/v1/sessions', { serviceId, type }, userToken);
      return s.status === 201 ? s : undefined;
    }, `a ${type} session`);
    return r.body.data.token as string;
  };
  const bind = await double.createTerminator({ address: randomUUID(), sessionToken: await session('Bind'), apiSessionToken: userToken });
  if (bind.result !== 0) throw new Error(`terminator refused: ${JSON.stringify(bind)}`);
  const dialToken = await session('Dial');
  return { router, double, userId, userToken, serviceId, dialToken, dialPolicyId, spareIdentityId };
}

export interface LargeShape {
  identities: number;
  services: number;
  servicePolicies: number;
}

/**
 * The large model through the management API, `concurrency` requests in flight (identities by
 * SQL when `sqlUrl` is given: the API creates about 20 a second on two cores): identities with
 * 1 to 5 of 300 attributes, services with 1 to 3 of 300, service policies (Dial and Bind, AnyOf)
 * selecting 1 to 3 attributes of each (about 200 identities per policy). Returns the policy ids.
 */
export async function populate(api: Api, shape: LargeShape, tag: string, concurrency: number, sqlUrl: string | undefined, log: (m: string) => void): Promise<string[]> {
  const rnd = prng(20261205);
  const attrs = (prefix: string, max: number) => {
    const out = new Set<string>();
    const n = 1 + Math.floor(rnd() * max);
    while (out.size < n) out.add(`${prefix}${Math.floor(rnd() * 300)}`);
    return [...out];
  };
  const t0 = Date.now();
  // A write refused with 503 (a dependency timed out under this load) is tried again, and counted.
  let refused = 0;
  const create = async (path: string, body: unknown): Promise<string> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await api.mgmt('POST', path, body);
      } catch (err) {
        if (attempt >= 5 || !String((err as Error).message).includes(': 503 ')) throw err;
        refused++;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };
  const identities = Array.from({ length: shape.identities }, (_, i) => ({ name: `${tag}-i${i}`, type: 'User', isAdmin: false, roleAttributes: attrs('a', 5) }));
  if (sqlUrl) {
    // identity-auth's rows and policy's projection of them, as bench/policy seeds them; the
    // projection's triggers note the model change, and the policies below are evaluated over them.
    const pg = new Client({ connectionString: sqlUrl });
    await pg.connect();
    try {
      const rows = JSON.stringify(identities.map((x, i) => ({ id: `${tag}-i${i}`, name: x.name, type_id: 'Default', role_attributes: x.roleAttributes })));
      for (const table of ['identity_auth.identities', 'policy.identities']) {
        await pg.query(`INSERT INTO ${table} (id, name, type_id, role_attributes) SELECT id, name, type_id, role_attributes FROM jsonb_to_recordset($1::jsonb) AS x(id text, name text, type_id text, role_attributes text[])`, [rows]);
      }
    } finally {
      await pg.end();
    }
  } else {
    await pool(identities, concurrency, async (body) => void (await create('/identities', body)));
  }
  log(`${identities.length} identities ${sqlUrl ? 'by SQL' : 'through the API'} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const services = Array.from({ length: shape.services }, (_, i) => ({ name: `${tag}-s${i}`, roleAttributes: attrs('s', 3), encryptionRequired: true }));
  await pool(services, concurrency, async (body) => void (await create('/services', body)));
  log(`${services.length} services in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const policies = Array.from({ length: shape.servicePolicies }, (_, i) => ({
    name: `${tag}-sp${i}`, type: i % 2 ? 'Bind' : 'Dial', semantic: 'AnyOf',
    identityRoles: attrs('a', 3).map((a) => `#${a}`), serviceRoles: attrs('s', 3).map((a) => `#${a}`),
  }));
  const ids: string[] = [];
  await pool(policies, concurrency, async (body) => void ids.push(await create('/service-policies', body)));
  log(`${policies.length} service policies in ${((Date.now() - t0) / 1000).toFixed(1)} s; ${refused} writes answered 503 and were tried again`);
  return ids;
}
