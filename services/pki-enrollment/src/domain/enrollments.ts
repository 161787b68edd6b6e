import { randomUUID } from 'node:crypto';
import { ApiError } from '@ziti/errors';
import { type Caller, isAdminCaller, mayTouchIdentity, mayUseEnrollmentSecrets, shortId } from '@ziti/http-kit';
import type { Jwts } from './jwts.js';
import { type Enrollment, type EnrollMethod, IDENTITY_METHODS, type IdentityRef, type ListRequest, type Page } from './model.js';
import type { IdentityDirectory, UnitOfWork } from './ports.js';

/** What a router's enrollment counts as for the escalation rules: no identity, no privilege. */
const NOT_PRIVILEGED = { isAdmin: false, isDefaultAdmin: false, permissions: [] };

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
  /** The management caller; a non-admin may not create an enrollment for a privileged identity. */
  caller?: Caller;
}

/** An enrollment's secrets (`token`, `jwt`) blanked, for a caller who may not use them. */
const withoutSecrets = (e: Enrollment): Enrollment => ({ ...e, token: '', jwt: '' });

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
      if (opts.caller && !mayTouchIdentity(opts.caller, identity === 'unknown' ? null : (identity.privilege ?? null))) throw ApiError.of('UNAUTHORIZED');
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
  async refresh(id: string, expiresAt: Date, caller?: Caller): Promise<Enrollment> {
    const enrollment = await this.uow.repos.enrollments.findById(id);
    if (!enrollment) throw ApiError.notFound();
    await this.assertMayTouch(caller, enrollment);
    if (!enrollment.jwt) throw ApiError.of('INVALID_ENROLL_METHOD');
    if (expiresAt.getTime() <= this.now()) throw ApiError.field('expiresAt', 'must be after the current date and time', expiresAt.toISOString());
    const token = randomUUID();
    const sub = enrollment.identityId ?? enrollment.edgeRouterId ?? enrollment.transitRouterId ?? '';
    const jwt = await this.jwts.enrollment({ sub, jti: token, em: jwtMethod(enrollment.method), expiresAt });
    await this.uow.repos.enrollments.update(id, { token, jwt, expiresAt });
    return (await this.uow.repos.enrollments.findById(id))!;
  }

  /** The management views below show an enrollment's secrets only to a caller who may use them (`mayUseEnrollmentSecrets`). */
  async detail(id: string, caller?: Caller): Promise<Enrollment> {
    const e = await this.uow.repos.enrollments.findById(id);
    if (!e) throw ApiError.notFound();
    return (await this.visibleTo(caller, [e]))[0]!;
  }

  async list(req: ListRequest, caller?: Caller): Promise<Page<Enrollment>> {
    const page = await this.uow.repos.enrollments.list(req);
    return { ...page, items: await this.visibleTo(caller, page.items) };
  }

  /** `/identities/{id}/enrollments`: 404 for an identity identity-auth says does not exist. */
  async listForIdentity(identityId: string, caller?: Caller): Promise<Page<Enrollment>> {
    if ((await this.identities.getIdentity(identityId)) === null) throw ApiError.notFound();
    const page = await this.uow.repos.enrollments.list({ limit: '-1' }, identityId);
    return { ...page, items: await this.visibleTo(caller, page.items) };
  }

  /**
   * The enrollments as `caller` may see them: secrets blanked unless it may use them. An admin
   * sees every one without a lookup, and so needs no answer from identity-auth; for anyone else an
   * identity's privilege is asked once per call (a router's enrollment is never privileged), and
   * when identity-auth can not say, the secrets stay hidden.
   */
  private async visibleTo(caller: Caller | undefined, items: Enrollment[]): Promise<Enrollment[]> {
    if (caller === undefined || isAdminCaller(caller)) return items;
    if (!mayUseEnrollmentSecrets(caller, NOT_PRIVILEGED)) return items.map(withoutSecrets);
    const ids = items.flatMap((e) => (e.identityId ? [e.identityId] : []));
    const known = ids.length > 0 ? await this.identities.getIdentities(ids) : new Map<string, IdentityRef>();
    return items.map((e) => (mayUseEnrollmentSecrets(caller, this.targetOf(e, known)) ? e : withoutSecrets(e)));
  }

  private targetOf(e: Enrollment, known: Map<string, IdentityRef> | 'unknown') {
    if (!e.identityId) return NOT_PRIVILEGED;
    return known === 'unknown' ? null : (known.get(e.identityId)?.privilege ?? null);
  }

  /** A non-admin may not refresh or delete the enrollment of a privileged identity (or of one identity-auth can not vouch for). */
  private async assertMayTouch(caller: Caller | undefined, e: Enrollment): Promise<void> {
    if (caller === undefined || isAdminCaller(caller) || !e.identityId) return;
    const identity = await this.identities.getIdentity(e.identityId);
    // An identity that is gone: its enrollment is an orphan no one can enroll as.
    if (identity === null) return;
    if (!mayTouchIdentity(caller, identity === 'unknown' ? null : (identity.privilege ?? null))) throw ApiError.of('UNAUTHORIZED');
  }

  /** The outstanding enrollments of identities (the `enrollment` block of their details), in creation order. */
  forIdentities(identityIds: readonly string[]): Promise<Enrollment[]> {
    return this.uow.repos.enrollments.findByIdentities(identityIds.filter((id) => id.length > 0));
  }

  async delete(id: string, caller?: Caller): Promise<void> {
    if (caller !== undefined && !isAdminCaller(caller)) {
      const e = await this.uow.repos.enrollments.findById(id);
      if (!e) throw ApiError.notFound();
      await this.assertMayTouch(caller, e);
    }
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
