import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { ApiError, fromGrpcError } from '@ziti/errors';
import { type GetIdentitiesResponse, IdentityAuthServiceClient, type IdentityInfo } from '@ziti/proto';
import type { IdentityRef } from '../domain/model.js';
import type { IdentityDirectory } from '../domain/ports.js';
import { grpcClient } from '@ziti/service-kit';

const DEADLINE_MS = 5_000;

/** identity-auth does not serve the RPC yet: a 503 that says so (nothing was changed). */
function notServed(rpc: string): ApiError {
  return ApiError.fromCode('UNHANDLED', {
    status: 503,
    message: 'The service that handles this request is not available',
    cause: { code: 'UNHANDLED', message: `identity-auth does not implement ${rpc} yet` },
  });
}

const identityRef = (i: IdentityInfo): IdentityRef => ({
  id: i.id,
  name: i.name,
  privilege: { isAdmin: i.isAdmin, isDefaultAdmin: i.isDefaultAdmin, permissions: [...(i.permissions ?? [])] },
});

/**
 * IdentityDirectory over identity-auth's gRPC API. UNIMPLEMENTED answers (identity-auth not
 * serving an RPC yet) are tolerated where the domain can go on without them: GetIdentity then
 * says `'unknown'`; the authenticator RPCs fail with a 503 that names the missing RPC.
 */
export function identityAuthDirectory(address: string | (() => string | undefined), log: (m: string) => void): IdentityDirectory & { close(): void } {
  let created: IdentityAuthServiceClient | undefined;
  /** The channel, opened on first use (the address may be known only once identity-auth started). */
  const channel = () => {
    if (created) return created;
    const target = typeof address === 'function' ? address() : address;
    if (!target) throw ApiError.of('TIMEOUT', { cause: { code: 'UNHANDLED', message: 'identity-auth is not available yet' } });
    created = grpcClient(IdentityAuthServiceClient, target, 'pki-enrollment');
    return created;
  };
  let warned = false;
  type Unary = (req: unknown, md: Metadata, opts: { deadline: number }, cb: (err: ServiceError | null, res: unknown) => void) => void;
  const call = <Req, Res>(rpc: string, method: keyof IdentityAuthServiceClient, req: Req) =>
    new Promise<Res>((resolve, reject) => {
      let client: IdentityAuthServiceClient;
      try {
        client = channel();
      } catch (err) {
        return reject(err);
      }
      const fn = (client[method] as unknown as Unary).bind(client);
      fn(req, new Metadata(), { deadline: Date.now() + DEADLINE_MS }, (err, res) => {
        if (!err) return resolve(res as Res);
        if (err.code === status.UNIMPLEMENTED) return reject(Object.assign(notServed(rpc), { unimplemented: true }));
        reject(fromGrpcError(err));
      });
    });
  return {
    async getIdentity(id) {
      try {
        return identityRef(await call<{ identityId: string }, IdentityInfo>('GetIdentity', 'getIdentity', { identityId: id }));
      } catch (err) {
        if ((err as { unimplemented?: boolean }).unimplemented) {
          if (!warned) log('pki-enrollment: identity-auth does not serve GetIdentity yet; identity ids are taken as given');
          warned = true;
          return 'unknown';
        }
        if (err instanceof ApiError && err.code === 'NOT_FOUND') return null;
        throw err;
      }
    },
    async getIdentities(ids) {
      if (ids.length === 0) return new Map();
      try {
        const res = await call<{ identityIds: string[] }, GetIdentitiesResponse>('GetIdentities', 'getIdentities', { identityIds: [...new Set(ids)] });
        return new Map(res.identities.map((i) => [i.id, identityRef(i)]));
      } catch (err) {
        if ((err as { unimplemented?: boolean }).unimplemented) return 'unknown';
        throw err;
      }
    },
    createCertAuthenticator: (req) =>
      call<object, { id: string }>('CreateCertAuthenticator', 'createCertAuthenticator', {
        identityId: req.identityId,
        certPem: req.certPem,
        fingerprint: req.fingerprint,
        isIssuedByNetwork: req.isIssuedByNetwork,
        caId: req.caId ?? '',
      }),
    createUpdbAuthenticator: (req) => call<typeof req, { id: string }>('CreateUpdbAuthenticator', 'createUpdbAuthenticator', req),
    createIdentityFromCa: (req) =>
      call<object, IdentityRef>('CreateIdentityFromCa', 'createIdentityFromCa', {
        name: req.name,
        roleAttributes: req.roleAttributes,
        caId: req.caId,
        certPem: req.certPem,
        fingerprint: req.fingerprint,
        externalId: req.externalId,
        authPolicyId: '',
      }),
    async deleteCaAuthenticators(caId) {
      const res = await call<{ caId: string }, { deleted: number }>('DeleteCaAuthenticators', 'deleteCaAuthenticators', { caId });
      return Number(res.deleted) || 0;
    },
    close: () => created?.close(),
  };
}
