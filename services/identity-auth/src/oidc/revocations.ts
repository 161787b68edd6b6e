import { ApiError } from '@ziti/errors';
import { isStorableText, revocationMarkerKey } from '@ziti/http-kit';
import type { Cache } from '@ziti/messaging';
import type { ListRequest, Page } from '../domain/model.js';
import type { Revocation, RevocationWriter, Transaction, UnitOfWork } from '../domain/ports.js';
import { MAX_TOKEN_SECONDS } from './claims.js';
import type { RevocableToken, RevocationPort, RevocationType } from './ports.js';

export const REVOCATION_TYPES: readonly RevocationType[] = ['JTI', 'IDENTITY', 'API_SESSION'];

/** The most ids one `ListRevocations` call may name, and the largest page. */
export const MAX_LISTED = 1000;

/** How many expired revocations one prune statement deletes (OpenZiti's `revocationDeleteBatchSize`). */
export const PRUNE_BATCH = 500;

/**
 * The Redis key of a revocation's marker, which every gateway reads on every bearer request
 * (OIDC.md "How a revocation reaches every replica at once"): `ziti:revoked:<type>:<id>`, its
 * value the revocation's `issuedBefore` in epoch milliseconds. The gateway reads the same key
 * (`@ziti/http-kit` principal-cache.ts).
 */

/** 8-4-4-4-12 hex, as Go's `uuid.Parse` accepts it for JTI and API_SESSION ids (any version). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `POST /revocations` as the handler hands it over. */
export interface RevocationInput {
  id: string;
  type?: string;
  tags?: Record<string, unknown> | null;
}

/**
 * Revocations of OIDC tokens (OIDC.md "Revocations"): rows of `revocations`, each with a Redis
 * marker set after its row is committed, so every gateway refuses the revoked tokens at once; when
 * the marker cannot be written the row still refuses them on the gateways' next cache miss.
 */
export class Revocations implements RevocationPort, RevocationWriter {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly cache: Cache,
    private readonly log: (msg: string) => void = () => undefined,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async revoke(type: RevocationType, id: string, opts: { expiresAt?: Date; issuedBefore?: Date; tags?: Record<string, unknown> } = {}): Promise<void> {
    const now = this.now();
    const revocation = await this.uow.run((tx) =>
      this.put(tx, {
        id,
        type,
        expiresAt: opts.expiresAt ?? new Date(now.getTime() + MAX_TOKEN_SECONDS * 1000),
        issuedBefore: opts.issuedBefore ?? now,
        tags: opts.tags ?? {},
      }),
    );
    await this.mark([revocation]);
  }

  revokeIn(tx: Transaction, type: RevocationType, id: string): Promise<Revocation> {
    const now = this.now();
    return this.put(tx, { id, type, expiresAt: new Date(now.getTime() + MAX_TOKEN_SECONDS * 1000), issuedBefore: now, tags: {} });
  }

  /** Writes the revocation and its `revocation.created` (routers learn it from the router control plane). */
  private async put(tx: Transaction, r: Pick<Revocation, 'id' | 'type' | 'expiresAt' | 'issuedBefore' | 'tags'>): Promise<Revocation> {
    const revocation = await tx.revocations.put(r);
    await tx.emit({ type: 'revocation.created', revocationId: revocation.id, revocationType: revocation.type });
    return revocation;
  }

  /**
   * The router control plane's read (`ListRevocations`): the live revocations of `ids` (at most
   * {@link MAX_LISTED}; more: 400 on `ids`), or else a page after `afterId` (`nextAfterId` empty on the last).
   */
  async listLive(ids: readonly string[], afterId: string, limit: number): Promise<{ revocations: Revocation[]; nextAfterId: string }> {
    const wanted = [...new Set(ids.filter((v) => typeof v === 'string' && v.length > 0 && isStorableText(v)))];
    if (ids.length > MAX_LISTED) throw ApiError.field('ids', `at most ${MAX_LISTED} ids`, ids.length);
    if (ids.length > 0) return { revocations: wanted.length ? await this.uow.repos.revocations.listLive(wanted, '', 0, this.now()) : [], nextAfterId: '' };
    const size = limit > 0 && limit < MAX_LISTED ? limit : MAX_LISTED;
    const page = await this.uow.repos.revocations.listLive(undefined, isStorableText(afterId) ? afterId : '', size, this.now());
    return { revocations: page, nextAfterId: page.length === size ? page[page.length - 1]!.id : '' };
  }

  async mark(revocations: readonly Revocation[]): Promise<void> {
    const now = this.now().getTime();
    for (const r of revocations) {
      const ttlSeconds = Math.ceil((r.expiresAt.getTime() - now) / 1000);
      if (ttlSeconds <= 0) continue;
      const issuedBefore = (r.issuedBefore ?? this.now()).getTime();
      await this.cache.set(revocationMarkerKey(r.type, r.id), String(issuedBefore), ttlSeconds).catch((err: unknown) => {
        // The row is committed: gateways see it on their next cache miss (within 30 s).
        this.log(`identity-auth: revocation marker ${r.type}:${r.id} not written: ${(err as Error)?.message ?? String(err)}`);
      });
    }
  }

  isRevoked(token: RevocableToken): Promise<boolean> {
    return this.uow.repos.revocations.isRevoked(token);
  }

  /**
   * `POST /revocations`: type JTI unless given; JTI and API_SESSION ids must be UUIDs (400 on `id`),
   * an IDENTITY revocation must name an existing identity (404). Create-or-replace. Returns the id.
   */
  async create(input: RevocationInput): Promise<string> {
    const type = (input.type ?? 'JTI') as RevocationType;
    if (!REVOCATION_TYPES.includes(type)) throw ApiError.field('type', `type in body should be one of [${REVOCATION_TYPES.join(' ')}]`, input.type);
    const id = input.id;
    if (type === 'IDENTITY') {
      if (!id || !(await this.uow.repos.identities.findById(id))) throw ApiError.notFound();
    } else if (!UUID.test(id)) {
      throw ApiError.field('id', 'must be a valid UUID v4', id);
    }
    await this.revoke(type, id, { tags: input.tags && typeof input.tags === 'object' ? { ...input.tags } : {} });
    return id;
  }

  list(req: ListRequest): Promise<Page<Revocation>> {
    return this.uow.repos.revocations.list(req);
  }

  async detail(id: string): Promise<Revocation> {
    const r = await this.uow.repos.revocations.find(id);
    if (!r) throw ApiError.notFound();
    return r;
  }

  /** Deletes expired revocations, {@link PRUNE_BATCH} per statement, until none is left; how many. */
  async prune(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.uow.repos.revocations.deleteExpired(this.now(), PRUNE_BATCH);
      total += n;
      if (n < PRUNE_BATCH) return total;
    }
  }
}
