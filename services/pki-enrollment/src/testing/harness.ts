// Test doubles and helpers for the integration tests: an in-memory identity directory standing in
// for identity-auth, and an HTTP caller that signs principals and client-certificate headers as
// the gateway does. Not used by the service itself.
import { internalFetch } from '@ziti/service-kit';
import { ApiError } from '@ziti/errors';
import { CLIENT_CERT_HEADER, PRINCIPAL_HEADER, REQUEST_ID_HEADER, type RequestPrincipal, shortId, signClientCertChain, signPrincipal } from '@ziti/http-kit';
import type { IdentityRef } from '../domain/model.js';
import type { IdentityDirectory } from '../domain/ports.js';

export const SECRET = 'pki-test-internal-secret';
/** The secret the edge server key of the tests' pki-enrollment is derived from. */
export const SERVER_KEY_SECRET = 'pki-test-server-key-secret-of-32-characters';

export interface FakeAuthenticator {
  id: string;
  identityId: string;
  method: 'cert' | 'updb';
  fingerprint?: string;
  certPem?: string;
  username?: string;
  caId?: string;
  isIssuedByNetwork?: boolean;
}

/** identity-auth as an in-memory map; `notImplemented` makes every RPC answer as identity-auth does before phase 2. */
export class FakeDirectory implements IdentityDirectory {
  readonly identities = new Map<string, IdentityRef & { externalId?: string; roleAttributes?: string[] }>();
  readonly authenticators: FakeAuthenticator[] = [];
  readonly deletedCaAuthenticators: string[] = [];
  notImplemented = false;
  /** The next authenticator/identity creation fails with this error. */
  failNext?: ApiError;

  /** An identity identity-auth would know; not privileged unless `privilege` says so. */
  add(name: string, privilege: IdentityRef['privilege'] = { isAdmin: false, isDefaultAdmin: false, permissions: [] }): IdentityRef {
    const id = shortId();
    this.identities.set(id, { id, name, privilege });
    return { id, name };
  }

  private unavailable(rpc: string): ApiError {
    return ApiError.fromCode('UNHANDLED', { status: 503, message: 'not available', cause: { code: 'UNHANDLED', message: `identity-auth does not implement ${rpc} yet` } });
  }

  private check(rpc: string): void {
    if (this.notImplemented) throw this.unavailable(rpc);
    const fail = this.failNext;
    this.failNext = undefined;
    if (fail) throw fail;
  }

  async getIdentity(id: string) {
    if (this.notImplemented) return 'unknown' as const;
    return this.identities.get(id) ?? null;
  }

  async getIdentities(ids: readonly string[]) {
    if (this.notImplemented) return 'unknown' as const;
    return new Map(ids.flatMap((id) => (this.identities.has(id) ? [[id, this.identities.get(id)!] as const] : [])));
  }

  async createCertAuthenticator(req: { identityId: string; certPem: string; fingerprint: string; isIssuedByNetwork: boolean; caId?: string }) {
    this.check('CreateCertAuthenticator');
    if (!this.identities.has(req.identityId)) throw ApiError.notFound();
    if (this.authenticators.some((a) => a.fingerprint === req.fingerprint)) throw ApiError.of('CERT_IN_USE');
    const a: FakeAuthenticator = { id: shortId(), method: 'cert', ...req };
    this.authenticators.push(a);
    return { id: a.id };
  }

  async createUpdbAuthenticator(req: { identityId: string; username: string; password: string }) {
    this.check('CreateUpdbAuthenticator');
    if (!this.identities.has(req.identityId)) throw ApiError.notFound();
    const a: FakeAuthenticator = { id: shortId(), method: 'updb', identityId: req.identityId, username: req.username };
    this.authenticators.push(a);
    return { id: a.id };
  }

  async createIdentityFromCa(req: { name: string; roleAttributes: string[]; caId: string; certPem: string; fingerprint: string; externalId: string }) {
    this.check('CreateIdentityFromCa');
    const id = shortId();
    let name = req.name.replaceAll('[identityId]', id);
    const taken = (n: string) => [...this.identities.values()].some((i) => i.name === n);
    for (let n = 1; taken(name); n++) name = `${req.name.replaceAll('[identityId]', id)}${String(n).padStart(6, '0')}`;
    this.identities.set(id, { id, name, externalId: req.externalId || undefined, roleAttributes: req.roleAttributes });
    if (!req.externalId) this.authenticators.push({ id: shortId(), identityId: id, method: 'cert', fingerprint: req.fingerprint, certPem: req.certPem, caId: req.caId });
    return { id, name };
  }

  async deleteCaAuthenticators(caId: string) {
    this.check('DeleteCaAuthenticators');
    this.deletedCaAuthenticators.push(caId);
    return 0;
  }
}

export function principal(over: Partial<RequestPrincipal> = {}): RequestPrincipal {
  return {
    identityId: 'admin-id', identityName: 'admin', apiSessionId: 'as-1', isAdmin: true, isDefaultAdmin: true, isFullyAuthenticated: true,
    permissions: [], configTypes: [], authenticatorId: 'auth-1', expiresAt: new Date(Date.now() + 1800_000).toISOString(),
    expirationSeconds: 1800, identityTypeId: 'Default', ...over,
  };
}

export interface CallOptions {
  method?: string;
  /** Path under `/edge/<api>/v1`. */
  path: string;
  api?: 'client' | 'management';
  principal?: RequestPrincipal;
  json?: unknown;
  raw?: string;
  headers?: Record<string, string>;
  /** Client certificate chain (leaf first, DER) forwarded as the gateway does. */
  chain?: Buffer[];
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** One request to the service's HTTP app, with the headers the gateway would add. */
export async function call(baseUrl: string, o: CallOptions): Promise<Reply> {
  const rid = shortId();
  const headers: Record<string, string> = { [REQUEST_ID_HEADER]: rid, ...o.headers };
  if (o.principal) headers[PRINCIPAL_HEADER] = signPrincipal(SECRET, o.principal, rid);
  if (o.chain) headers[CLIENT_CERT_HEADER] = signClientCertChain(SECRET, o.chain, rid);
  let body: string | undefined;
  if (o.json !== undefined) {
    body = JSON.stringify(o.json);
    headers['content-type'] ??= 'application/json';
  } else if (o.raw !== undefined) body = o.raw;
  const res = await internalFetch(`${baseUrl}/edge/${o.api ?? 'management'}/v1${o.path}`, { method: o.method ?? (body !== undefined ? 'POST' : 'GET'), headers, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: parsed };
}

/** A started service on a fresh test database, with a fake identity directory and an in-process bus. */
export interface TestService {
  url: string;
  grpcAddress: string;
  directory: FakeDirectory;
  bus: import('@ziti/messaging').InProcessEventBus;
  databaseUrl: string;
  stop(): Promise<void>;
}

export async function startTestService(): Promise<TestService> {
  const { createInProcessBus, createMemoryCache } = await import('@ziti/messaging');
  const { createTestDatabase, testInfra } = await import('@ziti/test-kit');
  const { runMigrations, startService } = await import('../index.js');
  const db = await createTestDatabase((await testInfra()).databaseUrl);
  await runMigrations(db.url);
  const directory = new FakeDirectory();
  const bus = createInProcessBus();
  const cache = createMemoryCache();
  const service = await startService({
    databaseUrl: db.url, bus, cache, internalSecret: SECRET, serverKeySecret: SERVER_KEY_SECRET, http: { host: '127.0.0.1', port: 0 }, grpc: { host: '127.0.0.1', port: 0 },
    identityDirectory: directory, advertisedAddress: 'ctrl.example.test:1280', log: () => undefined,
  });
  return {
    url: service.httpUrl,
    grpcAddress: service.grpcAddress,
    directory,
    bus,
    databaseUrl: db.url,
    async stop() {
      await service.stop();
      await bus.close();
      await cache.close();
      await db.drop();
    },
  };
}

/** PEM → DER of every certificate in a bundle. */
export function pemToDers(pem: string): Buffer[] {
  return [...pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)].map((m) => Buffer.from(m[1]!.replace(/\s/g, ''), 'base64'));
}
