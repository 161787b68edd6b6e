import { BASE, type EdgeApi, Resource, uniqueName } from './clients.js';
import type { HttpClient, HttpResponse } from './http.js';
import { type ThirdPartyCa, csrPem, ecKeys } from './x509.js';

/**
 * Clients of the pki-enrollment operations for the black-box tests: enrollments, CAs, the enroll
 * flows (PEM, JSON, mTLS), the well-known CA bundle, network JWTs, API-session certificates.
 */

/** jose ships only ES modules: loaded dynamically (the suite is CommonJS). */
export const jose = () => import('jose');

export const enrollments = (mgmt: EdgeApi) => new Resource(mgmt, 'enrollments');
export const cas = (mgmt: EdgeApi) => new Resource(mgmt, 'cas');

export const inMinutes = (m: number) => new Date(Date.now() + m * 60_000).toISOString();

/** An identity created through the API (identity-auth), for enrollments to target. */
export async function newIdentity(mgmt: EdgeApi, body: Record<string, unknown> = {}): Promise<{ id: string; name: string }> {
  const name = uniqueName('pki');
  const res = await mgmt.identities.create({ name, type: 'Device', isAdmin: false, ...body });
  if (res.status !== 201) throw new Error(`identity create failed: ${res.status} ${res.text}`);
  return { id: res.body.data.id, name };
}

/** Creates an enrollment and returns its detail (`enrollmentDetail`). */
export async function newEnrollment(mgmt: EdgeApi, body: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await enrollments(mgmt).create({ expiresAt: inMinutes(60), ...body });
  if (res.status !== 201) throw new Error(`enrollment create failed: ${res.status} ${res.text}`);
  return (await enrollments(mgmt).get(res.body.data.id)).body.data;
}

/** `POST /enroll?method=…&token=…` with a PEM CSR body (as sdk-golang does). */
export function enrollPem(http: HttpClient, token: string, csr: string, o: { method?: string; contentType?: string; accept?: string; path?: string } = {}): Promise<HttpResponse> {
  const q = new URLSearchParams({ ...(o.method ? { method: o.method } : {}), token });
  return http.request({
    method: 'POST',
    path: `${o.path ?? `${BASE.client}/enroll`}?${q}`,
    raw: csr,
    headers: { 'content-type': o.contentType ?? 'application/x-pem-file', ...(o.accept ? { accept: o.accept } : {}) },
  });
}

/** A fresh EC P-256 key, its CSR, and the key PEM (what an SDK keeps). */
export function deviceKeys(commonName = 'device') {
  const keys = ecKeys();
  return { keys, csr: csrPem(keys, { commonName }), keyPem: keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

/** A CA body (`caCreate`) for a third-party CA. */
export function caBody(ca: ThirdPartyCa, over: Record<string, unknown> = {}) {
  return {
    name: uniqueName('ca'), certPem: ca.certPem, isAutoCaEnrollmentEnabled: true, isOttCaEnrollmentEnabled: true, isAuthEnabled: true,
    identityRoles: ['pki-test'], ...over,
  };
}

/** Creates and verifies a CA; returns its id. */
export async function verifiedCa(mgmt: EdgeApi, ca: ThirdPartyCa, over: Record<string, unknown> = {}): Promise<string> {
  const created = await cas(mgmt).create(caBody(ca, over));
  if (created.status !== 201) throw new Error(`CA create failed: ${created.status} ${created.text}`);
  const id = created.body.data.id as string;
  const token = (await cas(mgmt).get(id)).body.data.verificationToken as string;
  const verified = await verifyCa(mgmt, id, ca.issue(token).certPem);
  if (verified.status !== 200) throw new Error(`CA verify failed: ${verified.status} ${verified.text}`);
  return id;
}

/** `POST /cas/{id}/verify` with a PEM certificate as `text/plain`. */
export function verifyCa(mgmt: EdgeApi, id: string, pem: string): Promise<HttpResponse> {
  return mgmt.http.request({ method: 'POST', path: `${BASE.management}/cas/${id}/verify`, raw: pem, token: mgmt.token, headers: { 'content-type': 'text/plain' } });
}

/** `GET /.well-known/est/cacerts` at `path` (the root, or under an API base). */
export function caCerts(http: HttpClient, path: string): Promise<HttpResponse> {
  return http.request({ path, headers: { accept: 'application/pkcs7-mime' } });
}

/** The current API session's certificates (`/current-api-session/certificates`, client API). */
export function sessionCerts(client: EdgeApi) {
  return {
    list: () => client.call('GET', '/current-api-session/certificates'),
    get: (id: string) => client.call('GET', `/current-api-session/certificates/${id}`),
    create: (csr: string) => client.call('POST', '/current-api-session/certificates', { csr }),
    delete: (id: string) => client.call('DELETE', `/current-api-session/certificates/${id}`),
  };
}

/** A request presenting a client certificate (mTLS) on the client API. */
export function withClientCert(http: HttpClient, cert: { certPem: string; keyPem: string }, method: string, path: string, json?: unknown): Promise<HttpResponse> {
  return http.request({ method, path: `${BASE.client}${path}`, json, clientCert: cert });
}
