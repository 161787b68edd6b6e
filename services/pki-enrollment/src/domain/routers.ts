import { randomUUID } from 'node:crypto';
import { ApiError } from '@ziti/errors';
import { shortId } from '@ziti/http-kit';
import type { Jwts } from './jwts.js';
import type { UnitOfWork } from './ports.js';

export interface RouterEnrollmentView {
  routerId: string;
  routerType: 'edge' | 'transit' | '';
  enrollmentId: string;
  token: string;
  jwt: string;
  expiresAt: Date | null;
  /** When the outstanding enrollment was created (null once enrolled). */
  createdAt: Date | null;
  isVerified: boolean;
  fingerprint: string;
  certPem: string;
}

/**
 * Router enrollment for the policy context (which owns the router records): a (re-)enrollment
 * replaces any outstanding enrollment of the router and its current certificate (the old JWT and
 * the old certificate stop working); the router enrolls with `POST /enroll?method=erott|trott&token=…`
 * (what `ziti router enroll` sends) or `/enroll/erott`.
 */
export class RouterEnrollments {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly jwts: Jwts,
    private readonly defaultLifetimeMs: number,
  ) {}

  async create(routerId: string, routerType: string, expiresAt: Date | null, routerName: string): Promise<RouterEnrollmentView> {
    if (!routerId) throw ApiError.field('routerId', 'router id is required', routerId);
    if (routerType !== 'edge' && routerType !== 'transit') throw ApiError.field('routerType', 'must be edge or transit', routerType);
    const exp = expiresAt ?? new Date(Date.now() + this.defaultLifetimeMs);
    if (exp.getTime() <= Date.now()) throw ApiError.field('expiresAt', 'expiresAt must be in the future', exp.toISOString());
    const token = randomUUID();
    const method = routerType === 'edge' ? 'erott' : 'trott';
    const jwt = await this.jwts.enrollment({ sub: routerId, jti: token, em: method, expiresAt: exp });
    await this.uow.run(async (tx) => {
      await tx.lock(`router:${routerId}`);
      await tx.enrollments.deleteByRouter(routerId);
      await tx.routerCerts.delete(routerId);
      await tx.enrollments.create({
        id: shortId(), method, token, jwt, expiresAt: exp,
        identityId: null, identityName: null, caId: null, username: null,
        edgeRouterId: routerType === 'edge' ? routerId : null,
        transitRouterId: routerType === 'transit' ? routerId : null,
        routerName: routerName || null,
      });
    });
    return this.get(routerId);
  }

  async get(routerId: string): Promise<RouterEnrollmentView> {
    const [e, cert] = await Promise.all([this.uow.repos.enrollments.findByRouter(routerId), this.uow.repos.routerCerts.findByRouter(routerId)]);
    if (!e && !cert) throw ApiError.notFound();
    return {
      routerId,
      routerType: cert?.routerType ?? (e?.edgeRouterId ? 'edge' : e?.transitRouterId ? 'transit' : ''),
      enrollmentId: e?.id ?? '',
      token: e?.token ?? '',
      jwt: e?.jwt ?? '',
      expiresAt: e?.expiresAt ?? null,
      createdAt: e?.createdAt ?? null,
      isVerified: !!cert,
      fingerprint: cert?.fingerprint ?? '',
      certPem: cert?.certPem ?? '',
    };
  }

  async delete(routerId: string): Promise<void> {
    await this.uow.run(async (tx) => {
      await tx.enrollments.deleteByRouter(routerId);
      await tx.routerCerts.delete(routerId);
    });
  }
}
