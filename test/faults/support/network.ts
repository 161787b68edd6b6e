import { randomBytes } from 'node:crypto';
import type { AckedWrite, Answer, GatewayPool, Operation } from './load.js';

const CLIENT = '/edge/client/v1';
const MGMT = '/edge/management/v1';
/** API session tokens the load uses at once; each login replaces one. */
const TOKEN_POOL = 40;

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The suite's own calls (setup, probes, read-back), outside the recorded load: through the
 * gateway pool, tried again on a transport failure (the other gateway) up to three times.
 */
export class Api {
  constructor(private readonly pool: GatewayPool) {}

  async call(method: string, path: string, json?: unknown, token?: string): Promise<Answer> {
    let last: unknown;
    for (let attempt = 0; attempt < 3; attempt++) {
      const target = this.pool.pick();
      try {
        return await this.pool.request(target, method, path, json, token);
      } catch (err) {
        last = err;
        this.pool.markDown(target.name);
        await sleep(200);
      }
    }
    throw last;
  }

  /** A call that must answer `status`; the id of what it created, when it did. */
  async expect(status: number, method: string, path: string, json?: unknown, token?: string): Promise<string> {
    const res = await this.call(method, path, json, token);
    if (res.status !== status) throw new Error(`${method} ${path} → ${res.status} (expected ${status}): ${res.text.slice(0, 400)}`);
    return res.body?.data?.id as string;
  }

  async login(username: string, password: string, api = CLIENT): Promise<string> {
    const res = await this.call('POST', `${api}/authenticate?method=password`, { username, password });
    const token = res.body?.data?.token as string | undefined;
    if (res.status !== 200 || !token) throw new Error(`login of ${username} → ${res.status}: ${res.text.slice(0, 400)}`);
    return token;
  }
}

export interface Network {
  tag: string;
  adminToken: string;
  users: { id: string; username: string; password: string }[];
  /** Services every load user may dial. */
  services: string[];
  /** Client API session tokens of the load users (logins replace them). */
  tokens: string[];
}

/** A non-admin identity with a password, through the management API. */
export async function createUser(api: Api, adminToken: string, name: string, roleAttributes: string[]): Promise<{ id: string; username: string; password: string }> {
  const id = await api.expect(201, 'POST', `${MGMT}/identities`, { name, type: 'User', isAdmin: false, roleAttributes }, adminToken);
  const password = `Pw!${randomBytes(9).toString('base64url')}7a`;
  await api.expect(201, 'POST', `${MGMT}/authenticators`, { method: 'updb', identityId: id, username: name, password }, adminToken);
  return { id, username: name, password };
}

/**
 * What sessions need (as in the session-create black-box test): an edge router, an edge router
 * policy for the users (and the probes), services with a service edge router policy (the probes'
 * services too) and a Dial service policy; load users logged in once each.
 */
export async function buildNetwork(api: Api, admin: { username: string; password: string }, userCount = 8): Promise<Network> {
  const tag = `f${randomBytes(3).toString('hex')}`;
  const adminToken = await api.login(admin.username, admin.password, MGMT);
  const post = (path: string, body: unknown) => api.expect(201, 'POST', `${MGMT}${path}`, body, adminToken);
  await post('/edge-routers', { name: `${tag}-er`, roleAttributes: [`${tag}-routers`], isTunnelerEnabled: false });
  await post('/edge-router-policies', { name: `${tag}-erp`, semantic: 'AnyOf', identityRoles: [`#${tag}-users`, `#${tag}-probers`], edgeRouterRoles: [`#${tag}-routers`] });
  const services: string[] = [];
  for (let i = 1; i <= 3; i++) services.push(await post('/services', { name: `${tag}-svc-${i}`, roleAttributes: [`${tag}-svc`], encryptionRequired: true }));
  await post('/service-edge-router-policies', { name: `${tag}-serp`, semantic: 'AnyOf', serviceRoles: [`#${tag}-svc`, `#${tag}-probe-svc`], edgeRouterRoles: [`#${tag}-routers`] });
  await post('/service-policies', { name: `${tag}-dial`, type: 'Dial', semantic: 'AnyOf', identityRoles: [`#${tag}-users`], serviceRoles: [`#${tag}-svc`], postureCheckRoles: [] });
  const users = [];
  for (let i = 1; i <= userCount; i++) users.push(await createUser(api, adminToken, `${tag}-user-${i}`, [`${tag}-users`]));
  const tokens: string[] = [];
  for (const u of users) tokens.push(await api.login(u.username, u.password));
  return { tag, adminToken, users, services, tokens };
}

/**
 * The load's mix at 30 requests a second: logins 20 %, service lists 30 %, session creates 30 %,
 * identity creates 10 %, service policy creates 10 % (the writes land in `acked` when answered 2xx).
 */
export function operations(net: Network, acked: AckedWrite[]): Operation[] {
  let seq = 0;
  return [
    {
      kind: 'login',
      weight: 6,
      run: (pool, gw) => {
        const u = pick(net.users);
        return pool.request(gw, 'POST', `${CLIENT}/authenticate?method=password`, { username: u.username, password: u.password });
      },
      onSuccess: (a) => {
        const token = a.body?.data?.token as string | undefined;
        if (!token) return;
        if (net.tokens.length < TOKEN_POOL) net.tokens.push(token);
        else net.tokens[Math.floor(Math.random() * TOKEN_POOL)] = token;
      },
    },
    { kind: 'service-list', weight: 9, run: (pool, gw) => pool.request(gw, 'GET', `${CLIENT}/services?limit=25`, undefined, pick(net.tokens)) },
    {
      kind: 'session-create',
      weight: 9,
      run: (pool, gw) => pool.request(gw, 'POST', `${CLIENT}/sessions`, { serviceId: pick(net.services), type: 'Dial' }, pick(net.tokens)),
    },
    {
      kind: 'identity-create',
      weight: 3,
      run: (pool, gw) =>
        pool.request(gw, 'POST', `${MGMT}/identities`, { name: `${net.tag}-id-${++seq}`, type: 'User', isAdmin: false, roleAttributes: [`${net.tag}-created`] }, net.adminToken),
      onSuccess: (a, t) => acked.push({ kind: 'identity', id: a.body?.data?.id, t }),
    },
    {
      kind: 'policy-create',
      weight: 3,
      run: (pool, gw) =>
        pool.request(
          gw,
          'POST',
          `${MGMT}/service-policies`,
          { name: `${net.tag}-sp-${++seq}`, type: 'Dial', semantic: 'AnyOf', identityRoles: [`#${net.tag}-churn`], serviceRoles: [`@${net.services[0]}`], postureCheckRoles: [] },
          net.adminToken,
        ),
      onSuccess: (a, t) => acked.push({ kind: 'service-policy', id: a.body?.data?.id, t }),
    },
  ];
}

/** Reads every acknowledged write back (four at a time); the ones not found. */
export async function missingWrites(api: Api, adminToken: string, writes: AckedWrite[]): Promise<{ write: AckedWrite; status: number | string }[]> {
  const missing: { write: AckedWrite; status: number | string }[] = [];
  const queue = [...writes];
  const worker = async () => {
    for (let w = queue.shift(); w; w = queue.shift()) {
      const plural = w.kind === 'identity' ? 'identities' : 'service-policies';
      const res = await api.call('GET', `${MGMT}/${plural}/${encodeURIComponent(w.id)}`, undefined, adminToken).catch((err: Error) => ({ status: err.message }));
      if (res.status !== 200) missing.push({ write: w, status: res.status });
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  return missing;
}
