// OIDC fixtures for integration tests (not compiled into dist): the service on real PostgreSQL and
// Redis, access tokens signed with its OIDC keys, and OIDC API sessions as the provider stores them.
import { randomBytes, randomUUID } from 'node:crypto';
import type { ServiceError } from '@grpc/grpc-js';
import { type ApiError, fromGrpcError } from '@ziti/errors';
import type { RequestPrincipal } from '@ziti/http-kit';
import { createSchemaPool } from '@ziti/db-kit';
import { type Cache, createRedisCache } from '@ziti/messaging';
import { testInfra } from '@ziti/test-kit';
import type { Pool } from 'pg';
import { SecretBox } from '../domain/mfa/secret-box.js';
import { KeyRing, sqlKeyStore } from '../oidc/key-ring.js';
import { SCHEMA } from '../schema.js';
import { openDatabase } from '../store/db.js';
import { PrismaUnitOfWork } from '../store/unit-of-work.js';
import { Harness, SECRET } from './harness.js';

export const INVALID_BEARER = 'Bearer realm="openziti-oidc" error="invalid" error_description="token is invalid"';
export const EXPIRED_BEARER = 'Bearer realm="openziti-oidc" error="expired" error_description="token expired"';
export const nowSeconds = () => Math.floor(Date.now() / 1000);

export class OidcFixture {
  private constructor(
    readonly h: Harness,
    /** The service's shared cache: a real Redis, under a key prefix of this fixture's own. */
    readonly redis: Cache,
    private readonly pool: Pool,
    /** A key ring on the service's database: what it signs, the service verifies. */
    readonly ring: KeyRing,
    readonly admin: RequestPrincipal,
  ) {}

  static async start(): Promise<OidcFixture> {
    const { redisUrl } = await testInfra();
    const redis = await createRedisCache(redisUrl, { keyPrefix: `test:idauth-oidc:${randomBytes(6).toString('hex')}:` });
    const h = await Harness.start({ cache: redis });
    const pool = createSchemaPool(h.db.url, SCHEMA);
    return new OidcFixture(h, redis, pool, new KeyRing(sqlKeyStore(pool), new SecretBox(SECRET)), (await h.login()).principal);
  }

  async close(): Promise<void> {
    await this.pool.end();
    await this.h.close();
    await this.redis.close();
  }

  /** A new non-admin (unless `body` says otherwise) identity with a password; its id. */
  async user(body: Record<string, unknown> = {}): Promise<string> {
    return (await this.h.createUser(this.admin, body)).id;
  }

  /** An OIDC API session of the identity, as the provider stores it at the code exchange; its id. */
  async oidcSession(identityId: string, opts: { expiresAt?: Date; mfaCompletedAt?: Date } = {}): Promise<string> {
    const id = randomUUID();
    await this.h.sql(
      `INSERT INTO api_sessions (id, token, identity_id, authenticator_id, kind, expires_at, mfa_completed_at)
       VALUES ($1, $2, $3, 'auth-1', 'oidc', $4, $5)`,
      [id, `oidc:${randomUUID()}`, identityId, opts.expiresAt ?? new Date(Date.now() + 86_400_000), opts.mfaCompletedAt ?? null],
    );
    return id;
  }

  /** An access token of the session (`z_t:"a"`, 30 minutes), with `claims` overriding. */
  accessToken(identityId: string, apiSessionId: string, claims: Record<string, unknown> = {}): Promise<string> {
    const iat = nowSeconds();
    return this.ring.sign({
      iss: 'https://ctrl.example:1280/oidc', sub: identityId, aud: ['openziti'], iat, nbf: iat, exp: iat + 1800, jti: randomUUID(),
      auth_time: iat, amr: ['password'], client_id: 'openziti', z_asid: apiSessionId, z_t: 'a', z_ia: false, ...claims,
    });
  }

  /** The principal the gateway gets for an access token. */
  async principal(accessToken: string): Promise<RequestPrincipal> {
    return (await this.h.resolveBearer(accessToken)).principal as RequestPrincipal;
  }

  /** The error a resolution fails with (throws when it succeeds). */
  failure(p: Promise<unknown>): Promise<ApiError> {
    return p.then(
      () => {
        throw new Error('resolved');
      },
      (e: ServiceError) => fromGrpcError(e),
    );
  }

  /** The `WWW-Authenticate` challenge a bearer resolution of `token` is refused with. */
  async refusal(token: string): Promise<string | undefined> {
    return (await this.failure(this.h.resolveBearer(token))).headers['WWW-Authenticate'];
  }

  /** A unit of work on the service's database, for the sweeps it runs every minute. */
  async withUow<T>(fn: (uow: PrismaUnitOfWork) => Promise<T>): Promise<T> {
    const db = openDatabase(this.h.db.url);
    try {
      return await fn(new PrismaUnitOfWork(db.prisma, db.pool, { publishOnCommit: (_events, commit) => commit }));
    } finally {
      await db.close();
    }
  }
}
