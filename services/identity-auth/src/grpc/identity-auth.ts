import type { ServiceError, handleUnaryCall } from '@grpc/grpc-js';
import { toGrpcError } from '@ziti/errors';
import type { IdentityAuthServiceServer, IdentityInfo } from '@ziti/proto';
import type { ApiSessionManager } from '../domain/api-session-manager.js';
import type { AuthenticatorManager } from '../domain/authenticator-manager.js';
import type { IdentityManager } from '../domain/identity-manager.js';
import { type Identity, isDisabled } from '../domain/model.js';
import type { RouterSessions } from '../domain/router-sessions.js';
import { identityDetail } from '../http/views.js';
import type { KeyRing } from '../oidc/key-ring.js';
import type { Revocations } from '../oidc/revocations.js';

/** A unary handler from an async function; errors travel with their OpenZiti code (toGrpcError). */
function unary<Req, Res>(fn: (req: Req) => Promise<Res>): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    fn(call.request).then(
      (res) => callback(null, res),
      (err: unknown) => callback(toGrpcError(err) as ServiceError),
    );
  };
}

const identityInfo = (i: Identity): IdentityInfo => ({
  id: i.id,
  name: i.name,
  typeId: i.typeId,
  isAdmin: i.isAdmin,
  disabled: isDisabled(i),
  roleAttributes: i.roleAttributes,
  externalId: i.externalId ?? '',
  authPolicyId: i.authPolicyId,
  isDefaultAdmin: i.isDefaultAdmin,
  permissions: i.permissions,
});

/** The distinct non-empty ids of a request, at most `max`. */
const idsOf = (ids: readonly string[], max: number) => [...new Set(ids.filter((id) => typeof id === 'string' && id.length > 0))].slice(0, max);

/** At most this many identities per `RenderIdentities` call (a list page is at most 500). */
const MAX_RENDERED_IDENTITIES = 1000;

/** At most this many bearer tokens are looked at (the controller's MaxBearerTokensProcessed). */
const MAX_BEARER_TOKENS = 3;

/**
 * `ziti.v1.IdentityAuthService`: token resolution for the gateway, identity facts for the other
 * contexts, the authenticators and identities pki-enrollment's enroll flows create, the
 * identities of tunneler-enabled edge routers (policy), and for the router control plane (fabric)
 * the legacy API sessions routers hold, their heartbeats, the OIDC token verification keys and the
 * live revocations.
 */
export function identityAuthServer(
  sessions: ApiSessionManager,
  identities: IdentityManager,
  authenticators: AuthenticatorManager,
  fabric: { sessions: RouterSessions; keys: Pick<KeyRing, 'verificationKeys'>; revocations: Pick<Revocations, 'listLive'> },
): IdentityAuthServiceServer {
  return {
    resolveApiSession(call, callback) {
      const { token, bearerTokens, accessToken } = call.request;
      // An OIDC access token (a bearer request without zt-session) or a legacy zt-session.
      const resolution = accessToken ? sessions.resolveBearer(accessToken) : sessions.resolve(token, (bearerTokens ?? []).slice(0, MAX_BEARER_TOKENS));
      resolution.then(
        ({ principal, cacheTtlSeconds, wwwAuthenticate }) => callback(null, { principal, cacheTtlSeconds, wwwAuthenticate: wwwAuthenticate ?? '' }),
        (err: unknown) => callback(toGrpcError(err) as ServiceError),
      );
    },
    getIdentity: unary(async (req) => identityInfo(await identities.find(req.identityId))),
    getIdentities: unary(async (req) => {
      const ids = idsOf(req.identityIds, MAX_RENDERED_IDENTITIES);
      return { identities: (ids.length > 0 ? await identities.findMany(ids) : []).map(identityInfo) };
    }),
    createCertAuthenticator: unary(async (req) => {
      const a = await authenticators.createCert({
        identityId: req.identityId, certPem: req.certPem, fingerprint: req.fingerprint, isIssuedByNetwork: req.isIssuedByNetwork, caId: req.caId || null,
      });
      return { id: a.id, identityId: req.identityId, method: 'cert', fingerprint: a.fingerprint, username: '' };
    }),
    createUpdbAuthenticator: unary(async (req) => {
      const id = await authenticators.createUpdb({ identityId: req.identityId, username: req.username, password: req.password });
      return { id, identityId: req.identityId, method: 'updb', fingerprint: '', username: req.username };
    }),
    createIdentityFromCa: unary(async (req) =>
      identityInfo(
        await identities.createFromCa({
          name: req.name, roleAttributes: req.roleAttributes, caId: req.caId, certPem: req.certPem, fingerprint: req.fingerprint,
          externalId: req.externalId, authPolicyId: req.authPolicyId,
        }),
      ),
    ),
    deleteCaAuthenticators: unary(async (req) => ({ deleted: await authenticators.deleteByCa(req.caId) })),
    ensureRouterIdentity: unary(async (req) => identityInfo(await identities.ensureRouterIdentity(req.routerId, req.name))),
    deleteRouterIdentity: unary(async (req) => ({ deleted: await identities.deleteRouterIdentity(req.routerId) })),
    // The router control plane (fabric only, `internal-acl.ts`): raw legacy tokens leave identity-auth on this call alone.
    listLegacyApiSessions: unary(async (req) => {
      const { sessions, nextAfterId } = await fabric.sessions.list(req.ids ?? [], req.afterId ?? '', req.limit ?? 0);
      return { apiSessions: sessions.map((s) => ({ id: s.id, token: s.token, identityId: s.identityId, certFingerprints: s.certFingerprints })), nextAfterId };
    }),
    touchApiSessions: unary(async (req) => fabric.sessions.touch(req.tokens ?? [])),
    getTokenVerificationKeys: unary(async () => ({ keys: (await fabric.keys.verificationKeys()).map((k) => ({ kid: k.kid, publicKeyDer: k.publicKeyDer })) })),
    listRevocations: unary(async (req) => {
      const { revocations, nextAfterId } = await fabric.revocations.listLive(req.ids ?? [], req.afterId ?? '', req.limit ?? 0);
      return {
        revocations: revocations.map((r) => ({ id: r.id, type: r.type, expiresAtMs: r.expiresAt.getTime(), issuedBeforeMs: r.issuedBefore?.getTime() ?? 0 })),
        nextAfterId,
      };
    }),
    // The same `identityDetail` as GET /identities, so other contexts' identity lists cannot drift from it.
    renderIdentities: unary(async (req) => {
      const ids = idsOf(req.identityIds, MAX_RENDERED_IDENTITIES);
      const views = ids.length > 0 ? await identities.views(ids) : [];
      const caller = { isAdmin: req.callerIsAdmin === true, isDefaultAdmin: false, permissions: req.callerPermissions ?? [] };
      return { identities: views.map((v) => ({ id: v.id, detailJson: JSON.stringify(identityDetail(v, caller)) })) };
    }),
  };
}
