import { type KeyObject, verify } from 'node:crypto';
import type { EdgeApi } from './clients.js';
import { Resource } from './clients.js';
import type { HttpResponse } from './http.js';

/**
 * Typed clients of the session and posture areas: sessions, service updates, posture checks and
 * their types and role attributes, posture responses, an identity's posture data and failed
 * service requests. They return the raw response; assertions stay in the tests.
 */
export function sessionClients(api: EdgeApi) {
  return {
    sessions: new Resource(api, 'sessions'),
    postureChecks: new Resource(api, 'posture-checks'),
    postureCheckTypes: new Resource(api, 'posture-check-types'),
    createSession: (serviceId: string, type?: 'Dial' | 'Bind', extra: Record<string, unknown> = {}): Promise<HttpResponse> =>
      api.call('POST', '/sessions', { serviceId, ...(type ? { type } : {}), ...extra }),
    routePath: (id: string) => api.call('GET', `/sessions/${encodeURIComponent(id)}/route-path`),
    serviceUpdates: () => api.call('GET', '/current-api-session/service-updates'),
    postureResponse: (body: unknown) => api.call('POST', '/posture-response', body),
    postureResponseBulk: (body: unknown) => api.call('POST', '/posture-response-bulk', body),
    postureCheckRoleAttributes: (query = '') => api.call('GET', `/posture-check-role-attributes${query}`),
    postureCheckRoleAttributeUsage: (query = '') => api.call('GET', `/posture-check-role-attribute-usage${query}`),
    postureData: (identityId: string) => api.call('GET', `/identities/${encodeURIComponent(identityId)}/posture-data`),
    failedServiceRequests: (identityId: string) => api.call('GET', `/identities/${encodeURIComponent(identityId)}/failed-service-requests`),
  };
}

/** Polls `probe` until `done` holds (events travel asynchronously); fails after `timeoutMs`. */
export async function eventually<T>(probe: () => Promise<T>, done: (v: T) => boolean, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T = await probe();
  while (!done(last)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last value: ${JSON.stringify(last)?.slice(0, 800)}`);
    await new Promise((r) => setTimeout(r, 100));
    last = await probe();
  }
  return last;
}

// ---------------------------------------------------------------- a small network for sessions

let seq = 0;
const unique = (p: string) => `${p}-${process.pid}-${++seq}-${Math.random().toString(36).slice(2, 7)}`;

async function created(res: HttpResponse, what: string): Promise<string> {
  if (res.status !== 201 || typeof res.body?.data?.id !== 'string') throw new Error(`creating ${what} failed: ${res.status} ${res.text.slice(0, 600)}`);
  return res.body.data.id as string;
}

/** Management helpers that build what POST /sessions needs: services, routers, the three policies, identities that can log in. */
export function networkBuilder(mgmt: EdgeApi) {
  return {
    service: (roleAttributes: string[] = [], name = unique('svc')) =>
      mgmt.call('POST', '/services', { name, roleAttributes, encryptionRequired: true }).then((r) => created(r, 'a service')),
    edgeRouter: (roleAttributes: string[] = [], name = unique('er')) =>
      mgmt.call('POST', '/edge-routers', { name, roleAttributes, isTunnelerEnabled: false }).then((r) => created(r, 'an edge router')),
    servicePolicy: (type: 'Dial' | 'Bind', identityRoles: string[], serviceRoles: string[], postureCheckRoles: string[] = [], semantic = 'AnyOf') =>
      mgmt
        .call('POST', '/service-policies', { name: unique('sp'), type, semantic, identityRoles, serviceRoles, postureCheckRoles })
        .then((r) => created(r, 'a service policy')),
    edgeRouterPolicy: (identityRoles: string[], edgeRouterRoles: string[]) =>
      mgmt.call('POST', '/edge-router-policies', { name: unique('erp'), semantic: 'AnyOf', identityRoles, edgeRouterRoles }).then((r) => created(r, 'an edge router policy')),
    serviceEdgeRouterPolicy: (serviceRoles: string[], edgeRouterRoles: string[]) =>
      mgmt
        .call('POST', '/service-edge-router-policies', { name: unique('serp'), semantic: 'AnyOf', serviceRoles, edgeRouterRoles })
        .then((r) => created(r, 'a service edge router policy')),
    postureCheck: (typeId: string, fields: Record<string, unknown>, roleAttributes: string[] = []) =>
      mgmt.call('POST', '/posture-checks', { name: unique(`pc-${typeId}`), typeId, roleAttributes, ...fields }).then((r) => created(r, 'a posture check')),
    /** A non-admin identity with a password authenticator. */
    identity: async (roleAttributes: string[] = []) => {
      const id = await mgmt.identities.create({ name: unique('user'), type: 'User', isAdmin: false, roleAttributes }).then((r) => created(r, 'an identity'));
      const username = unique('u');
      const password = `Pw!${Math.random().toString(36).slice(2)}Aa9`;
      await mgmt.call('POST', '/authenticators', { method: 'updb', identityId: id, username, password }).then((r) => created(r, 'an authenticator'));
      return { id, username, password };
    },
    unique,
  };
}

/** Verifies a compact JWS with a public key (ES256/384/512 or RS256) and decodes it. */
export function verifyJwt(token: string, key: KeyObject): { valid: boolean; header: Record<string, unknown>; claims: Record<string, unknown> } {
  const [h, p, s] = token.split('.');
  const header = JSON.parse(Buffer.from(h ?? '', 'base64url').toString()) as Record<string, unknown>;
  const claims = JSON.parse(Buffer.from(p ?? '', 'base64url').toString()) as Record<string, unknown>;
  const alg = String(header.alg);
  const digest = { ES256: 'sha256', ES384: 'sha384', ES512: 'sha512', RS256: 'sha256' }[alg];
  const valid = !!digest && verify(digest, Buffer.from(`${h}.${p}`), alg.startsWith('ES') ? { key, dsaEncoding: 'ieee-p1363' } : key, Buffer.from(s ?? '', 'base64url'));
  return { valid, header, claims };
}

