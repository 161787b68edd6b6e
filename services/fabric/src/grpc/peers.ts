import {
  IdentityAuthServiceClient,
  PkiEnrollmentServiceClient,
  PolicyServiceClient,
  SessionServiceClient,
  type GetRouterDataModelRequest,
  type ApiSessionCertificateFingerprints,
  type LegacyApiSession,
  type ListLegacyApiSessionsRequest,
  type ListLegacyApiSessionsResponse,
  type ListRevocationsRequest,
  type ListRevocationsResponse,
  type RemoveTerminatorsRequest,
  type RevocationInfo,
  type RouterDataModel,
  type RouterEnrollment,
  type RouterInfo,
  type ServerCertificate,
  type ServiceAccess,
  type SessionInfo,
  type SigningCertificate,
  type TerminatorInfo,
  type TokenVerificationKey,
  type UpdateTerminatorRequest,
  type UpsertEdgeTerminatorRequest,
} from '@ziti/proto';
import { type Address, type Unary, grpcClient, lazyGrpcClient } from '@ziti/service-kit';

export type { Address };

/** The addresses of the contexts fabric calls. */
export interface PeerAddresses {
  policyGrpc?: Address;
  identityAuthGrpc?: Address;
  pkiEnrollmentGrpc?: Address;
  sessionGrpc?: Address;
}

/** Everything the router control plane asks the other contexts (each call as the `fabric` caller). */
export interface Peers {
  getRouter(routerId: string): Promise<RouterInfo>;
  getRouterDataModel(only?: GetRouterDataModelRequest): Promise<RouterDataModel>;
  /** The identity's access to the service; its edge routers without live state (fabric has it). */
  getServiceAccess(identityId: string, serviceId: string): Promise<ServiceAccess>;
  upsertEdgeTerminator(req: UpsertEdgeTerminatorRequest): Promise<TerminatorInfo>;
  updateTerminator(req: UpdateTerminatorRequest): Promise<TerminatorInfo>;
  removeTerminators(req: RemoveTerminatorsRequest): Promise<string[]>;
  listServiceTerminators(serviceId: string): Promise<TerminatorInfo[]>;
  listLegacyApiSessions(req: Partial<ListLegacyApiSessionsRequest>): Promise<ListLegacyApiSessionsResponse>;
  touchApiSessions(tokens: string[]): Promise<{ unknownTokens: string[]; identityIds: string[] }>;
  getTokenVerificationKeys(): Promise<TokenVerificationKey[]>;
  listRevocations(req: Partial<ListRevocationsRequest>): Promise<ListRevocationsResponse>;
  issueCtrlCertificate(sans: string[], publicKeyPem: string): Promise<ServerCertificate>;
  /** The fingerprints of these API sessions' own certificates (at most 1000 ids): only sessions that have any. */
  listApiSessionCertificateFingerprints(apiSessionIds: string[]): Promise<ApiSessionCertificateFingerprints[]>;
  getRouterEnrollment(routerId: string): Promise<RouterEnrollment>;
  getSigningCertificate(): Promise<SigningCertificate>;
  getSessions(ids: string[]): Promise<SessionInfo[]>;
  close(): void;
}

// ts-proto's grpc-js clients overload every method; `u` picks the (req, md, opts, cb) form.
const u = <Req, Res>(fn: unknown) => fn as Unary<Req, Res>;

/** Every legacy API session, page by page. */
export async function allLegacyApiSessions(peers: Pick<Peers, 'listLegacyApiSessions'>): Promise<LegacyApiSession[]> {
  const all: LegacyApiSession[] = [];
  let afterId = '';
  for (;;) {
    const page = await peers.listLegacyApiSessions({ afterId, limit: 1000 });
    all.push(...page.apiSessions);
    if (!page.nextAfterId) return all;
    afterId = page.nextAfterId;
  }
}

/** The most API sessions one ListApiSessionCertificateFingerprints call names. */
const FINGERPRINT_BATCH = 1000;

/** The fingerprints of the certificates of these API sessions (any number, asked 1000 at a time), by session id. */
export async function apiSessionCertFingerprints(peers: Pick<Peers, 'listApiSessionCertificateFingerprints'>, ids: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (let i = 0; i < ids.length; i += FINGERPRINT_BATCH) {
    for (const e of await peers.listApiSessionCertificateFingerprints(ids.slice(i, i + FINGERPRINT_BATCH))) out.set(e.apiSessionId, e.fingerprints);
  }
  return out;
}

/** The live revocations `ids` names (at most 1000), or every live one, page by page. */
export async function liveRevocations(peers: Pick<Peers, 'listRevocations'>, ids?: readonly string[]): Promise<RevocationInfo[]> {
  if (ids) return ids.length > 0 ? (await peers.listRevocations({ ids: [...ids] })).revocations : [];
  const all: RevocationInfo[] = [];
  let afterId = '';
  for (;;) {
    const page = await peers.listRevocations({ afterId, limit: 1000 });
    all.push(...page.revocations);
    if (!page.nextAfterId) return all;
    afterId = page.nextAfterId;
  }
}

export function grpcPeers(addresses: PeerAddresses): Peers {
  const policy = lazyGrpcClient('policy', addresses.policyGrpc, (a) => grpcClient(PolicyServiceClient, a, 'fabric'));
  // The whole data model may be large: a longer deadline than the default.
  const policyBulk = lazyGrpcClient('policy', addresses.policyGrpc, (a) => grpcClient(PolicyServiceClient, a, 'fabric'), 60_000);
  const auth = lazyGrpcClient('identity-auth', addresses.identityAuthGrpc, (a) => grpcClient(IdentityAuthServiceClient, a, 'fabric'));
  const pki = lazyGrpcClient('pki-enrollment', addresses.pkiEnrollmentGrpc, (a) => grpcClient(PkiEnrollmentServiceClient, a, 'fabric'));
  const session = lazyGrpcClient('session', addresses.sessionGrpc, (a) => grpcClient(SessionServiceClient, a, 'fabric'));
  return {
    getRouter: (routerId) => policy.call((c) => u(c.getRouter), { routerId }),
    getRouterDataModel: (only) =>
      policyBulk.call((c) => u<GetRouterDataModelRequest, RouterDataModel>(c.getRouterDataModel), only ?? { partial: false, configTypeIds: [], configIds: [], serviceIds: [], servicePolicyIds: [], identityIds: [], postureCheckIds: [] }),
    getServiceAccess: (identityId, serviceId) => policy.call((c) => u(c.getServiceAccess), { identityId, serviceId, withoutLiveState: true }),
    upsertEdgeTerminator: (req) => policy.call((c) => u(c.upsertEdgeTerminator), req),
    updateTerminator: (req) => policy.call((c) => u(c.updateTerminator), req),
    removeTerminators: async (req) => (await policy.call((c) => u<RemoveTerminatorsRequest, { removedIds: string[] }>(c.removeTerminators), req)).removedIds,
    listServiceTerminators: async (serviceId) => (await policy.call((c) => u<{ serviceId: string }, { terminators: TerminatorInfo[] }>(c.listServiceTerminators), { serviceId })).terminators,
    listLegacyApiSessions: (req) => auth.call((c) => u(c.listLegacyApiSessions), { ids: [], afterId: '', limit: 0, ...req }),
    touchApiSessions: (tokens) => auth.call((c) => u(c.touchApiSessions), { tokens }),
    getTokenVerificationKeys: async () => (await auth.call((c) => u<object, { keys: TokenVerificationKey[] }>(c.getTokenVerificationKeys), {})).keys,
    listRevocations: (req) => auth.call((c) => u(c.listRevocations), { ids: [], afterId: '', limit: 0, ...req }),
    issueCtrlCertificate: (sans, publicKeyPem) => pki.call((c) => u(c.issueCtrlCertificate), { sans, publicKeyPem }),
    listApiSessionCertificateFingerprints: async (apiSessionIds) =>
      (await pki.call((c) => u<{ apiSessionIds: string[] }, { entries: ApiSessionCertificateFingerprints[] }>(c.listApiSessionCertificateFingerprints), { apiSessionIds })).entries,
    getRouterEnrollment: (routerId) => pki.call((c) => u(c.getRouterEnrollment), { routerId }),
    getSigningCertificate: () => pki.call((c) => u(c.getSigningCertificate), {}),
    getSessions: async (ids) => (await session.call((c) => u<{ ids: string[] }, { sessions: SessionInfo[] }>(c.getSessions), { ids })).sessions,
    close() {
      for (const c of [policy, policyBulk, auth, pki, session]) c.close();
    },
  };
}
