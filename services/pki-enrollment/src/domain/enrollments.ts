import { randomUUID } from 'node:crypto';
import { ApiError } from '@ziti/errors';
import { shortId } from '@ziti/http-kit';
import type { Jwts } from './jwts.js';
import { type Enrollment, type EnrollMethod, IDENTITY_METHODS, type ListRequest, type Page } from './model.js';
import type { IdentityDirectory, UnitOfWork } from './ports.js';

/** Default enrollment lifetime (`edge.enrollment.*.duration`): 180 minutes, never below 5. */
export function enrollmentLifetimeMs(minutes?: number): number {
  return (minutes !== undefined && minutes >= 5 ? minutes : 180) * 60_000;
}

export interface NewIdentityEnrollment {
  method: string;
  identityId?: string | null;
  expiresAt?: Date | null;
  caId?: string | null;
  username?: string | null;
}

/** Options of a create coming from identity-auth (which may vouch for an identity not committed yet). */
export interface CreateOptions {
  identityTrusted?: boolean;
  identityName?: string;
}

/** The JWT `em` of a method (transit routers enroll with `erott` too). */
export const jwtMethod = (m: EnrollMethod) => (m === 'trott' ? 'erott' : m);

/**
 * Identity enrollments: create (one outstanding per identity and method), refresh (a new token,
 * JWT and expiry), delete, list. The identity is checked with identity-auth; when identity-auth
 * can not answer (the RPC is not served yet) the id is taken as given.
 */
export class EnrollmentManager {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly jwts: Jwts,
    private readonly identities: IdentityDirectory,
    private readonly defaultLifetimeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async create(input: NewIdentityEnrollment, opts: CreateOptions = {}): Promise<Enrollment> {
    const identityId = input.identityId ?? '';
    if (!identityId) throw ApiError.field('identityId', 'identity not found', input.identityId ?? null);
    let identityName: string | null = opts.identityName || null;
    if (!opts.identityTrusted) {
      const identity = await this.identities.getIdentity(identityId);
      if (identity === null) throw ApiError.field('identityId', 'identity not found', identityId);
      if (identity !== 'unknown') identityName = identity.name;
    }
    const expiresAt = input.expiresAt ?? new Date(this.now() + this.defaultLifetimeMs);
    if (expiresAt.getTime() <= this.now()) throw ApiError.field('expiresAt', 'expiresAt must be in the future', expiresAt.toISOString());

    const method = input.method as EnrollMethod;
    let caId: string | null = null;
    let username: string | null = null;
    switch (method) {
      case 'ottca':
        caId = input.caId ?? null;
        if (!caId || !(await this.uow.repos.cas.findById(caId))) throw ApiError.field('caId', 'ca not found', input.caId ?? null);
        break;
      case 'updb':
        username = input.username ?? null;
        if (!username) throw ApiError.field('username', 'username not provided', input.username ?? null);
        break;
      case 'ott':
        break;
      default:
        throw ApiError.field('method', 'unsupported enrollment method', input.method);
    }

    const existing = await this.uow.repos.enrollments.findByIdentity(identityId);
    if (existing.some((e) => e.method === method)) throw ApiError.of('ENROLLMENT_EXISTS', { message: `an enrollment for method ${method} already exists` });

    const token = randomUUID();
    const id = shortId();
    const jwt = await this.jwts.enrollment({ sub: identityId, jti: token, em: method, expiresAt });
    await this.uow.repos.enrollments.create({
      id, method, token, jwt, expiresAt, identityId, identityName, caId, username,
      edgeRouterId: null, transitRouterId: null, routerName: null,
    });
    return (await this.uow.repos.enrollments.findById(id))!;
  }

  /** A new token and JWT with a new expiry; the old token stops working. */
  async refresh(id: string, expiresAt: Date): Promise<Enrollment> {
    const enrollment = await this.uow.repos.enrollments.findById(id);
    if (!enrollment) throw ApiError.notFound();
    if (!enrollment.jwt) throw ApiError.of('INVALID_ENROLL_METHOD');
    if (expiresAt.getTime() <= this.now()) throw ApiError.field('expiresAt', 'must be after the current date and time', expiresAt.toISOString());
    const token = randomUUID();
    const sub = enrollment.identityId ?? enrollment.edgeRouterId ?? enrollment.transitRouterId ?? '';
    const jwt = await this.jwts.enrollment({ sub, jti: token, em: jwtMethod(enrollment.method), expiresAt });
    await this.uow.repos.enrollments.update(id, { token, jwt, expiresAt });
    return (await this.uow.repos.enrollments.findById(id))!;
  }

  async detail(id: string): Promise<Enrollment> {
    const e = await this.uow.repos.enrollments.findById(id);
    if (!e) throw ApiError.notFound();
    return e;
  }

  list(req: ListRequest): Promise<Page<Enrollment>> {
    return this.uow.repos.enrollments.list(req);
  }

  /** `/identities/{id}/enrollments`: 404 for an identity identity-auth says does not exist. */
  async listForIdentity(identityId: string): Promise<Page<Enrollment>> {
    if ((await this.identities.getIdentity(identityId)) === null) throw ApiError.notFound();
    return this.uow.repos.enrollments.list({ limit: '-1' }, identityId);
  }

  /** The outstanding enrollments of identities (the `enrollment` block of their details), in creation order. */
  forIdentities(identityIds: readonly string[]): Promise<Enrollment[]> {
    return this.uow.repos.enrollments.findByIdentities(identityIds.filter((id) => id.length > 0));
  }

  async delete(id: string): Promise<void> {
    if (!(await this.uow.repos.enrollments.delete(id))) throw ApiError.notFound();
  }

  /** Deletes an enrollment if it still exists (identity-auth's compensation); false when it did not. */
  deleteIfPresent(id: string): Promise<boolean> {
    return this.uow.repos.enrollments.delete(id);
  }

  deleteForIdentity(identityId: string): Promise<number> {
    return this.uow.repos.enrollments.deleteByIdentity(identityId);
  }
}

export const isIdentityMethod = (m: string): m is (typeof IDENTITY_METHODS)[number] => (IDENTITY_METHODS as readonly string[]).includes(m);
