import type { X509Certificate } from 'node:crypto';
import { BASE, type EdgeApi, uniqueName } from './clients.js';
import { enrollPem, newEnrollment, newIdentity } from './clients-pki.js';
import type { HttpClient, HttpResponse } from './http.js';
import { certificates, csrPem, ecKeys, keyPem } from './x509.js';

/**
 * Helpers of the certificate-authentication black-box tests (identity-auth's side of issue 4):
 * `POST /authenticate?method=cert` over mTLS, an identity enrolled by OTT as an SDK would, and
 * requests presenting a client certificate with a session.
 */

export interface Credential {
  certPem: string;
  keyPem: string;
}

export interface Enrolled {
  id: string;
  name: string;
  cred: Credential & { leaf: X509Certificate };
}

/** `POST /authenticate?method=cert` presenting `cred` (`root`: the un-prefixed alias the C SDK uses; `body: null` = no body at all). */
export function certLogin(
  http: HttpClient,
  cred: Credential | undefined,
  o: { root?: boolean; api?: 'client' | 'management'; body?: unknown } = {},
): Promise<HttpResponse> {
  const path = o.root ? '/authenticate?method=cert' : `${BASE[o.api ?? 'client']}/authenticate?method=cert`;
  const json = o.body === null ? undefined : (o.body ?? { sdkInfo: { type: 'ia-cert-test' } });
  return http.request({ method: 'POST', path, json, clientCert: cred });
}

/** An identity with an OTT enrollment, enrolled from a fresh EC key's CSR (PEM, as sdk-golang does). */
export async function enrollOtt(http: HttpClient, mgmt: EdgeApi, body: Record<string, unknown> = {}): Promise<Enrolled> {
  const identity = await newIdentity(mgmt, body);
  const e = await newEnrollment(mgmt, { method: 'ott', identityId: identity.id });
  const keys = ecKeys();
  const res = await enrollPem(http, e.token as string, csrPem(keys, { commonName: uniqueName('sdk') }), { method: 'ott' });
  if (res.status !== 200) throw new Error(`enroll failed: ${res.status} ${res.text}`);
  // Exactly application/json, as OpenZiti answers a PEM CSR (sdk-golang reads data.cert only then).
  if (res.headers['content-type'] !== 'application/json') throw new Error(`enroll answered content-type ${res.headers['content-type']}`);
  const chain = certificates(res.body.data.cert);
  return { ...identity, cred: { certPem: res.body.data.cert, keyPem: keyPem(keys), leaf: chain[0]! } };
}

/** Logs in with the certificate; the client-API session (fails loudly otherwise). */
export async function certSession(http: HttpClient, cred: Credential, client: EdgeApi): Promise<EdgeApi> {
  const res = await certLogin(http, cred);
  if (res.status !== 200) throw new Error(`cert login failed: ${res.status} ${res.text}`);
  return client.withToken(res.body.data.token as string);
}

/** The id of the identity's authenticator of `method` (management `/identities/{id}/authenticators`). */
export async function authenticatorOf(mgmt: EdgeApi, identityId: string, method = 'cert'): Promise<Record<string, any>> {
  const res = await mgmt.call('GET', `/identities/${identityId}/authenticators`);
  const found = (res.body.data as Record<string, any>[]).find((a) => a.method === method);
  if (!found) throw new Error(`no ${method} authenticator for ${identityId}: ${res.text}`);
  return found;
}

/** A request with a session token that also presents a client certificate (the SDK's mTLS connection). */
export function withSessionAndCert(http: HttpClient, session: EdgeApi, cred: Credential, method: string, path: string, json?: unknown): Promise<HttpResponse> {
  return http.request({ method, path: `${session.base}${path}`, json, token: session.token, clientCert: cred });
}
