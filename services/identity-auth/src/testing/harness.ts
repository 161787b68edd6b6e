// Integration-test harness (not compiled into dist): the real service on a fresh database, driven
// as the gateway drives it (signed principals over HTTP, ResolveApiSession over gRPC).
import { internalFetch, internalTestClient } from '@ziti/service-kit';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RequestPrincipal, signPrincipal } from '@ziti/http-kit';
import { type ChangeEvent, type InProcessEventBus, createInProcessBus, createMemoryCache } from '@ziti/messaging';
import { IdentityAuthServiceClient, type ResolveApiSessionResponse } from '@ziti/proto';
import { type TestDatabase, createTestDatabase, testInfra } from '@ziti/test-kit';
import { Client } from 'pg';
import { runMigrations } from '../schema.js';
import { type IdentityAuthDeps, type RunningService, startService } from '../service.js';

export const SECRET = 'test-internal-secret';
export const ADMIN = { username: 'admin', password: 'admin-password-1' };

export interface CallOptions {
  principal?: RequestPrincipal;
  body?: unknown;
  headers?: Record<string, string>;
  /** Another instance of the service (same database) to call instead of this harness's own. */
  baseUrl?: string;
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

export class Harness {
  readonly logs: string[] = [];
  readonly events: ChangeEvent[] = [];
  readonly bus: InProcessEventBus = createInProcessBus();
  readonly cache = createMemoryCache();
  service!: RunningService;
  private grpc?: IdentityAuthServiceClient;

  private constructor(
    readonly db: TestDatabase,
    readonly dataDir: string,
  ) {}

  /** A fresh database, migrated, and the service started on it. */
  static async start(deps: Partial<IdentityAuthDeps> = {}, opts: { start?: boolean } = {}): Promise<Harness> {
    const infra = await testInfra();
    const db = await createTestDatabase(infra.databaseUrl, 'idauth');
    await runMigrations(db.url);
    const h = new Harness(db, await mkdtemp(join(tmpdir(), 'idauth-')));
    await h.bus.subscribeBroadcast('identity-auth', ['>'], (e) => {
      h.events.push(e);
    });
    if (opts.start !== false) await h.restart(deps);
    return h;
  }

  deps(extra: Partial<IdentityAuthDeps> = {}): IdentityAuthDeps {
    return {
      databaseUrl: this.db.url,
      bus: this.bus,
      cache: this.cache,
      internalSecret: SECRET,
      http: { host: '127.0.0.1', port: 0 },
      grpc: { host: '127.0.0.1', port: 0 },
      dataDir: this.dataDir,
      admin: { ...ADMIN },
      log: (m) => this.logs.push(m),
      ...extra,
    };
  }

  async restart(deps: Partial<IdentityAuthDeps> = {}): Promise<void> {
    if (this.service) await this.service.stop();
    this.grpc?.close();
    this.grpc = undefined;
    this.service = await startService(this.deps(deps));
  }

  async close(): Promise<void> {
    this.grpc?.close();
    await this.service?.stop();
    await this.bus.close();
    await this.cache.close();
    await this.db.drop();
    await rm(this.dataDir, { recursive: true, force: true });
  }

  async sql<T = any>(text: string, params: unknown[] = []): Promise<T[]> {
    const c = new Client({ connectionString: this.db.url, options: '-c search_path=identity_auth' });
    await c.connect();
    try {
      return (await c.query(text, params)).rows as T[];
    } finally {
      await c.end();
    }
  }

  /** `ResolveApiSession` through a real grpc-js client. */
  resolve(token: string, bearerTokens: string[] = []): Promise<ResolveApiSessionResponse> {
    this.grpc ??= internalTestClient(IdentityAuthServiceClient, this.service.grpcAddress, 'identity-auth');
    return new Promise((resolve, reject) => this.grpc!.resolveApiSession({ token, bearerTokens, accessToken: '' }, (err, res) => (err ? reject(err) : resolve(res))));
  }

  /** `ResolveApiSession` of an OIDC access token, as the gateway asks for a bearer request without zt-session. */
  resolveBearer(accessToken: string): Promise<ResolveApiSessionResponse> {
    this.grpc ??= internalTestClient(IdentityAuthServiceClient, this.service.grpcAddress, 'identity-auth');
    return new Promise((resolve, reject) => this.grpc!.resolveApiSession({ token: '', bearerTokens: [], accessToken }, (err, res) => (err ? reject(err) : resolve(res))));
  }

  /** Calls the service's HTTP app as the gateway would (principal signed with the internal secret). */
  async call(method: string, url: string, opts: CallOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.principal) headers['x-ziti-principal'] = signPrincipal(SECRET, opts.principal, 'req1');
    let body: string | undefined;
    if (opts.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    }
    const res = await internalFetch((opts.baseUrl ?? this.service.httpUrl) + url, { method, headers, body });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, text, body: parsed };
  }

  /** Logs in with a password and returns the token and the principal the gateway would forward. */
  async login(username = ADMIN.username, password = ADMIN.password, api = 'management'): Promise<{ token: string; principal: RequestPrincipal; reply: Reply }> {
    const reply = await this.call('POST', `/edge/${api}/v1/authenticate?method=password`, { body: { username, password } });
    if (reply.status !== 200) throw new Error(`login failed: ${reply.status} ${reply.text}`);
    const token = reply.headers.get('zt-session')!;
    return { token, principal: await this.principal(token), reply };
  }

  async principal(token: string): Promise<RequestPrincipal> {
    const res = await this.resolve(token);
    return res.principal as RequestPrincipal;
  }

  /** Creates an identity (admin call) with an updb authenticator; returns its id and credentials. */
  async createUser(admin: RequestPrincipal, body: Record<string, unknown> = {}, password = 'Str0ng!Passw0rd'): Promise<{ id: string; username: string; password: string }> {
    const name = `user-${Math.random().toString(36).slice(2, 10)}`;
    const created = await this.call('POST', `${M}/identities`, { principal: admin, body: { name, type: 'User', isAdmin: false, ...body } });
    if (created.status !== 201) throw new Error(`identity create failed: ${created.status} ${created.text}`);
    const id = created.body.data.id as string;
    const auth = await this.call('POST', `${M}/authenticators`, { principal: admin, body: { method: 'updb', identityId: id, username: name, password } });
    if (auth.status !== 201) throw new Error(`authenticator create failed: ${auth.status} ${auth.text}`);
    return { id, username: name, password };
  }

  /** Waits until the outbox relay delivered everything committed so far. */
  async settle(): Promise<void> {
    for (let i = 0; i < 50; i++) {
      const pending = await this.sql<{ n: string }>('SELECT count(*) AS n FROM outbox_events WHERE published_at IS NULL');
      if (Number(pending[0]!.n) === 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await this.bus.idle();
  }
}

export const M = '/edge/management/v1';
export const C = '/edge/client/v1';
