import { createVerify, X509Certificate } from 'node:crypto';
import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { PkiEnrollmentServiceClient, PostureServiceClient, type RouterEnrollment, type SigningCertificate } from '@ziti/proto';
import { IdentityAuthServiceClient, type RenderIdentitiesResponse } from '@ziti/proto';
import type { RouterEnrollmentInfo } from '../domain/model.js';
import type { PostureEvaluator, PostureResult, RouterEnrollments, SessionTokenReader } from '../domain/ports.js';
import { grpcClient } from '@ziti/service-kit';

/** A gRPC address now, or a function giving it once the other context has started (the all-in-one start). */
export type AddressSource = string | (() => string | undefined) | undefined;

const DEADLINE_MS = 3000;
/** After an UNIMPLEMENTED answer, the RPC is not tried again for this long. */
const UNIMPLEMENTED_BACKOFF_MS = 30_000;

/**
 * Calls to another context that may not serve an RPC yet: UNIMPLEMENTED or unreachable answers
 * become `null` (callers then render without that context's data and say so).
 */
/** How often, and how far apart, an UNAVAILABLE optional call is tried again. */
const UNAVAILABLE_RETRIES = 3;
const RETRY_MS = 250;

export class Optional<C extends { close(): void }> {
  private client?: C;
  private address?: string;
  private skipUntil = new Map<string, number>();

  constructor(
    private readonly source: AddressSource,
    private readonly make: (address: string) => C,
    private readonly log: (m: string) => void,
  ) {}

  private get(): C | undefined {
    const address = typeof this.source === 'function' ? this.source() : this.source;
    if (!address) return undefined;
    if (!this.client || this.address !== address) {
      this.client?.close();
      this.client = this.make(address);
      this.address = address;
    }
    return this.client;
  }

  async call<T>(name: string, fn: (c: C, deadline: Date, cb: (err: ServiceError | null, res: T) => void) => void): Promise<T | null> {
    if ((this.skipUntil.get(name) ?? 0) > Date.now()) return null;
    const client = this.get();
    if (!client) return null;
    // UNAVAILABLE is asked again after a moment (a replica behind the address may just have gone,
    // and the next connection reaches another), within the one deadline.
    const deadline = Date.now() + DEADLINE_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        return await new Promise<T>((resolve, reject) => fn(client, new Date(deadline), (err, res) => (err ? reject(err) : resolve(res))));
      } catch (err) {
        const code = (err as ServiceError).code;
        if (code === status.UNIMPLEMENTED) {
          this.skipUntil.set(name, Date.now() + UNIMPLEMENTED_BACKOFF_MS);
          return null;
        }
        const wait = RETRY_MS * (attempt + 1);
        if (code === status.UNAVAILABLE && attempt < UNAVAILABLE_RETRIES && Date.now() + wait < deadline) {
          await new Promise((r) => setTimeout(r, wait));
          continue;
        }
        if (code === status.UNAVAILABLE || code === status.DEADLINE_EXCEEDED) {
          this.log(`policy: ${name} unavailable: ${(err as Error).message}`);
          return null;
        }
        throw err;
      }
    }
  }

  close(): void {
    this.client?.close();
  }
}

function enrollmentInfo(e: RouterEnrollment): RouterEnrollmentInfo {
  return {
    jwt: e.jwt || null,
    token: e.token || null,
    expiresAt: e.expiresAt || null,
    createdAt: e.createdAt || null,
    isVerified: e.isVerified,
    fingerprint: e.fingerprint || null,
    certPem: e.certPem || null,
  };
}

/** Router enrollment through pki-enrollment (`CreateRouterEnrollment`, `GetRouterEnrollment`). */
export function pkiRouterEnrollments(source: AddressSource, log: (m: string) => void): RouterEnrollments & SessionTokenReader & { close(): void } {
  const rpc = new Optional(source, (a) => grpcClient(PkiEnrollmentServiceClient, a, 'policy'), log);
  let key: { at: number; value: SigningCertificate | null } | undefined;
  const signingKey = async () => {
    if (!key || Date.now() - key.at > 60_000) key = { at: Date.now(), value: await rpc.call<SigningCertificate>('GetSigningCertificate', (c, deadline, cb) => c.getSigningCertificate({}, new Metadata(), { deadline }, cb)).catch(() => null) };
    return key.value;
  };
  return {
    async create(routerId, kind, name) {
      const e = await rpc.call<RouterEnrollment>('CreateRouterEnrollment', (c, deadline, cb) =>
        c.createRouterEnrollment({ routerId, routerType: kind, expiresAt: '', routerName: name }, new Metadata(), { deadline }, cb),
      );
      return e ? enrollmentInfo(e) : null;
    },
    async get(routerId) {
      const e = await rpc.call<RouterEnrollment>('GetRouterEnrollment', (c, deadline, cb) => c.getRouterEnrollment({ routerId }, new Metadata(), { deadline }, cb)).catch(() => null);
      return e ? enrollmentInfo(e) : null;
    },
    async remove(routerId) {
      await rpc.call('DeleteRouterEnrollment', (c, deadline, cb) => c.deleteRouterEnrollment({ routerId }, new Metadata(), { deadline }, cb)).catch((err: unknown) => {
        log(`policy: DeleteRouterEnrollment(${routerId}) failed: ${String(err)}`);
      });
    },
    async read(token) {
      const parts = token.split('.');
      if (parts.length !== 3) return null;
      let claims: Record<string, unknown>;
      let header: Record<string, unknown>;
      try {
        header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
        claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
      } catch {
        return null;
      }
      if (claims.z_t !== 's' || typeof claims.z_asid !== 'string' || typeof claims.sub !== 'string') return null;
      const k = await signingKey();
      if (k && !verifySignature(parts, String(header.alg ?? ''), k)) return null;
      return { apiSessionId: claims.z_asid, serviceId: claims.sub };
    },
    close: () => rpc.close(),
  };
}

function verifySignature(parts: string[], alg: string, key: SigningCertificate): boolean {
  try {
    const pub = new X509Certificate(key.certPem).publicKey;
    const hash = alg.endsWith('384') ? 'sha384' : alg.endsWith('512') ? 'sha512' : 'sha256';
    const v = createVerify(hash).update(`${parts[0]}.${parts[1]}`);
    return v.verify({ key: pub, dsaEncoding: alg.startsWith('ES') ? 'ieee-p1363' : 'der' }, Buffer.from(parts[2], 'base64url'));
  } catch {
    return false;
  }
}

/** Posture evaluation through the posture context (`PostureService.EvaluatePostureChecks`). */
export function postureEvaluator(source: AddressSource, log: (m: string) => void): PostureEvaluator & { close(): void } {
  const rpc = new Optional(source, (a) => grpcClient(PostureServiceClient, a, 'policy'), log);
  return {
    async evaluate(identityId, apiSessionId, checkIds, mfaCompletedAt) {
      const res = await rpc
        .call<import('@ziti/proto').EvaluatePostureChecksResponse>('EvaluatePostureChecks', (c, deadline, cb) =>
          c.evaluatePostureChecks({ identityId, apiSessionId, postureCheckIds: [...checkIds], mfaCompletedAt: mfaCompletedAt ?? '' }, new Metadata(), { deadline }, cb),
        )
        .catch((err: unknown) => {
          log(`policy: EvaluatePostureChecks failed: ${String(err)}`);
          return null;
        });
      if (!res) return null;
      const results = new Map<string, PostureResult>();
      for (const r of res.results) {
        let extra: Record<string, unknown> = {};
        try {
          extra = r.queryJson ? (JSON.parse(r.queryJson) as Record<string, unknown>) : {};
        } catch {
          extra = {};
        }
        results.set(r.id, { id: r.id, isPassing: r.isPassing, typeId: r.typeId, timeout: Number(r.timeout), timeoutRemaining: Number(r.timeoutRemaining), extra });
      }
      return { results, anyExist: res.anyPostureChecksExist };
    },
    close: () => rpc.close(),
  };
}

/**
 * The identities of tunneler-enabled edge routers in identity-auth (`EnsureRouterIdentity`,
 * `DeleteRouterIdentity`, §5.4). Every failure (unavailable, UNIMPLEMENTED, refused) is logged and
 * swallowed: the router write has committed and policy's own projection identity stays.
 */
export function identityAuthRouterIdentities(source: AddressSource, log: (m: string) => void): import('../domain/ports.js').RouterIdentities & { close(): void } {
  const rpc = new Optional(source, (a) => grpcClient(IdentityAuthServiceClient, a, 'policy'), log);
  const failed = (what: string) => (err: unknown) => log(`policy: ${what} failed: ${String(err)}`);
  return {
    async ensure(routerId, name) {
      return rpc.call('EnsureRouterIdentity', (c, deadline, cb) => c.ensureRouterIdentity({ routerId, name }, new Metadata(), { deadline }, cb)).then(
        (res) => res !== null,
        (err: unknown) => (failed(`EnsureRouterIdentity(${routerId})`)(err), false),
      );
    },
    async remove(routerId) {
      await rpc.call('DeleteRouterIdentity', (c, deadline, cb) => c.deleteRouterIdentity({ routerId }, new Metadata(), { deadline }, cb)).catch(failed(`DeleteRouterIdentity(${routerId})`));
    },
    close: () => rpc.close(),
  };
}

/**
 * identity-auth's `identityDetail` of a page of identities (`RenderIdentities`, one call per page).
 * Unavailable or UNIMPLEMENTED answers are `null` (the caller renders the projection instead); a
 * detail that is not a JSON object is left out, so that identity falls back to the projection too.
 */
export function identityAuthIdentityViews(source: AddressSource, log: (m: string) => void): import('../domain/ports.js').IdentityViews & { close(): void } {
  const rpc = new Optional(source, (a) => grpcClient(IdentityAuthServiceClient, a, 'policy'), log);
  return {
    async render(ids, caller) {
      if (ids.length === 0) return new Map();
      const who = { callerIsAdmin: !!caller && (caller.isAdmin || caller.isDefaultAdmin), callerPermissions: [...(caller?.permissions ?? [])] };
      const res = await rpc.call<RenderIdentitiesResponse>('RenderIdentities', (c, deadline, cb) =>
        c.renderIdentities({ identityIds: [...ids], ...who }, new Metadata(), { deadline }, cb),
      ).catch((err: unknown) => {
        log(`policy: RenderIdentities failed: ${String(err)}`);
        return null;
      });
      if (!res) return null;
      const out = new Map<string, Record<string, unknown>>();
      for (const r of res.identities) {
        try {
          const detail: unknown = JSON.parse(r.detailJson);
          if (detail !== null && typeof detail === 'object' && !Array.isArray(detail)) out.set(r.id, detail as Record<string, unknown>);
        } catch {
          log(`policy: RenderIdentities answered an unreadable detail for ${r.id}`);
        }
      }
      return out;
    },
    close: () => rpc.close(),
  };
}
