import { auth, type EdgeApi } from './clients.js';
import { selfSignedCert } from './clients-identity.js';
import { caBody } from './clients-pki.js';
import { created, policyBuilder, unique } from './clients-policy.js';
import type { HttpClient } from './http.js';
import type { Caller } from './fuzz-inputs.js';
import { thirdPartyCa } from './x509.js';

/**
 * The entities the fuzz suite points path parameters and reference fields at (one of each kind,
 * created by the admin before fuzzing), and the two callers that hold a session: the default admin
 * and a fully authenticated identity that is not admin. No fixture is a caller's own identity,
 * so an operation that disables or re-enrolls a fixture never ends a caller's session.
 */

export interface Fixtures {
  /** Resource path prefix (`/identities`, `/current-identity/authenticators`) → real id. */
  ids: Record<string, string>;
  /** Fixtures that could not be created (their operations get bogus ids only), with the reason. */
  missing: string[];
  /** The target identity's password credentials (never a caller). */
  target: Credentials;
}

export interface Credentials {
  username: string;
  password: string;
}

/** Session tokens of the two callers; `refresh` logs a caller in again when its session ended. */
export class Callers {
  readonly tokens: Partial<Record<Caller, string>> = {};
  /** How often a session had to be renewed (e.g. after DELETE /current-api-session). */
  renewals = 0;
  ownAuthenticator: Partial<Record<Caller, string>> = {};

  constructor(
    private readonly http: HttpClient,
    readonly creds: Record<'admin' | 'nonadmin', Credentials>,
  ) {}

  token(caller: Caller): string | undefined {
    return caller === 'none' ? undefined : this.tokens[caller];
  }

  async login(caller: 'admin' | 'nonadmin'): Promise<void> {
    const { res, token } = await auth.login(this.http, this.creds[caller].username, this.creds[caller].password, 'management');
    if (!token) throw new Error(`${caller} login failed: ${res.status} ${res.text.slice(0, 300)}`);
    this.tokens[caller] = token;
  }

  /** Logs a caller in again if its session no longer works. */
  async refresh(): Promise<void> {
    for (const caller of ['admin', 'nonadmin'] as const) {
      const res = await this.http.request({ method: 'GET', path: '/edge/management/v1/current-api-session', token: this.tokens[caller], validate: false });
      if (res.status !== 200) {
        this.renewals += 1;
        await this.login(caller);
      }
    }
  }
}

async function attempt(missing: string[], what: string, fn: () => Promise<string>): Promise<string | undefined> {
  try {
    return await fn();
  } catch (e) {
    missing.push(`${what}: ${(e as Error).message.slice(0, 200)}`);
    return undefined;
  }
}

/** Creates the fixtures and the non-admin caller; `mgmt` is the admin's management session. */
export async function createFixtures(http: HttpClient, mgmt: EdgeApi, admin: Credentials): Promise<{ fixtures: Fixtures; callers: Callers }> {
  const b = policyBuilder(mgmt);
  const missing: string[] = [];
  const ids: Record<string, string> = {};
  const set = (key: string, id: string | undefined) => {
    if (id) ids[key] = id;
  };

  // The non-admin caller: a User with a password, role attribute `fuzz` so policies reach it.
  const nonadmin = await b.identity(['fuzz']);
  const callers = new Callers(http, { admin, nonadmin: { username: nonadmin.username, password: nonadmin.password } });
  await callers.login('admin');
  await callers.login('nonadmin');
  for (const caller of ['admin', 'nonadmin'] as const) {
    const res = await http.request({ method: 'GET', path: '/edge/management/v1/current-identity/authenticators', token: callers.tokens[caller], validate: false });
    callers.ownAuthenticator[caller] = res.body?.data?.[0]?.id;
  }

  // The target identity (never a caller), its authenticator, an API session and an enrollment of it.
  const target = await b.identity(['fuzz-target']);
  set('/identities', target.id);
  const authn = await mgmt.call('GET', `/identities/${target.id}/authenticators`);
  set('/authenticators', authn.body?.data?.[0]?.id);
  const targetLogin = await auth.login(http, target.username, target.password, 'management');
  set('/api-sessions', targetLogin.res.body?.data?.id);
  set('/enrollments', await attempt(missing, 'enrollment', () =>
    mgmt.call('POST', '/enrollments', { method: 'ott', identityId: target.id, expiresAt: new Date(Date.now() + 86_400_000).toISOString() }).then((r) => created(r, 'an enrollment'))));

  const configType = await b.configType({ type: 'object' });
  set('/config-types', configType);
  set('/configs', await attempt(missing, 'config', () => b.config(configType, {})));
  const service = await b.service(['fuzz'], [], unique('fuzz-svc'));
  set('/services', service);
  const edgeRouter = await attempt(missing, 'edge router', () => b.edgeRouter(['fuzz']));
  set('/edge-routers', edgeRouter);
  set('/routers', await attempt(missing, 'router', () => mgmt.call('POST', '/routers', { name: unique('fr') }).then((r) => created(r, 'a router'))));
  set('/transit-routers', await attempt(missing, 'transit router', () => mgmt.call('POST', '/transit-routers', { name: unique('tr') }).then((r) => created(r, 'a transit router'))));
  if (edgeRouter) {
    set('/terminators', await attempt(missing, 'terminator', () =>
      mgmt.call('POST', '/terminators', { service, router: edgeRouter, binding: 'transport', address: 'tcp:127.0.0.1:9' }).then((r) => created(r, 'a terminator'))));
  }
  set('/service-policies', await attempt(missing, 'service policy', () => b.servicePolicy('Dial', ['#fuzz'], ['#fuzz'], 'AnyOf')));
  set('/edge-router-policies', await attempt(missing, 'edge router policy', () => b.edgeRouterPolicy(['#fuzz'], ['#fuzz'], 'AnyOf')));
  set('/service-edge-router-policies', await attempt(missing, 'service edge router policy', () => b.serviceEdgeRouterPolicy(['#fuzz'], ['#fuzz'], 'AnyOf')));
  set('/posture-checks', await attempt(missing, 'posture check', () =>
    mgmt.call('POST', '/posture-checks', { name: unique('pc'), typeId: 'DOMAIN', domains: ['fuzz.example'], roleAttributes: ['fuzz-pc'] }).then((r) => created(r, 'a posture check'))));
  set('/auth-policies', await attempt(missing, 'auth policy', () =>
    mgmt.call('POST', '/auth-policies', {
      name: unique('ap'),
      primary: { cert: { allowed: true, allowExpiredCerts: false }, extJwt: { allowed: false, allowedSigners: [] }, updb: { allowed: true, minPasswordLength: 5, requireSpecialChar: false, requireNumberChar: false, requireMixedCase: false, maxAttempts: 0, lockoutDurationMinutes: 0 } },
      secondary: { requireTotp: false, requireExtJwtSigner: null },
    }).then((r) => created(r, 'an auth policy'))));
  set('/external-jwt-signers', await attempt(missing, 'external JWT signer', () =>
    mgmt.call('POST', '/external-jwt-signers', { name: unique('signer'), enabled: true, issuer: unique('iss'), audience: 'aud', kid: unique('kid'), certPem: selfSignedCert('fuzz-signer').certPem }).then((r) => created(r, 'a signer'))));
  set('/cas', await attempt(missing, 'CA', () => mgmt.call('POST', '/cas', caBody(thirdPartyCa('Fuzz CA'))).then((r) => created(r, 'a CA'))));

  // A session of the non-admin caller for the fixture service (needs the Dial policy and routers).
  const client = await http.request({ method: 'POST', path: '/edge/client/v1/sessions', token: callers.tokens.nonadmin, json: { serviceId: service, type: 'Dial' }, validate: false });
  if (client.status === 201) set('/sessions', client.body.data.id);
  else missing.push(`session: ${client.status} ${client.text.slice(0, 200)}`);

  set('/identity-types', 'User');
  set('/posture-check-types', 'OS');
  const specs = await mgmt.call('GET', '/specs');
  set('/specs', specs.body?.data?.[0]?.id);
  return { fixtures: { ids, missing, target: { username: target.username, password: target.password } }, callers };
}

/** The real id for a path parameter of a route, for one caller. */
export function realIdFor(fixtures: Fixtures, callers: Callers, caller: Caller, routePath: string, param: string): string | undefined {
  if (param === 'serviceId') return fixtures.ids['/services'];
  const prefix = routePath.split(`/{${param}}`)[0]!;
  if (prefix === '/current-identity/authenticators') return caller === 'none' ? undefined : callers.ownAuthenticator[caller];
  if (fixtures.ids[prefix]) return fixtures.ids[prefix];
  return fixtures.ids[`/${prefix.split('/').pop()}`];
}

/** Real ids for reference fields of a body, by field name. */
export function refFor(fixtures: Fixtures, field: string): string | undefined {
  const byField: Record<string, string> = {
    identityId: '/identities', serviceId: '/services', configTypeId: '/config-types', caId: '/cas', authPolicyId: '/auth-policies',
    enrollAuthPolicyId: '/auth-policies', configId: '/configs', service: '/services', router: '/edge-routers',
  };
  const key = byField[field];
  return key ? fixtures.ids[key] : undefined;
}
