import type { ContextName } from './internal-tls.js';

/**
 * Which context may call which internal RPC: every gRPC method the contexts serve, by full path,
 * with the only callers that need it. A method not listed is refused to everyone. This table is
 * the one place the internal call graph is written down (the Kubernetes NetworkPolicies follow it).
 */
export const INTERNAL_RPC_CALLERS: Readonly<Record<string, readonly ContextName[]>> = {
  // identity-auth
  '/ziti.v1.IdentityAuthService/ResolveApiSession': ['gateway'],
  '/ziti.v1.IdentityAuthService/GetIdentity': ['pki-enrollment', 'posture'],
  '/ziti.v1.IdentityAuthService/GetIdentities': ['pki-enrollment'],
  '/ziti.v1.IdentityAuthService/CreateCertAuthenticator': ['pki-enrollment'],
  '/ziti.v1.IdentityAuthService/CreateUpdbAuthenticator': ['pki-enrollment'],
  '/ziti.v1.IdentityAuthService/CreateIdentityFromCa': ['pki-enrollment'],
  '/ziti.v1.IdentityAuthService/DeleteCaAuthenticators': ['pki-enrollment'],
  '/ziti.v1.IdentityAuthService/EnsureRouterIdentity': ['policy'],
  '/ziti.v1.IdentityAuthService/DeleteRouterIdentity': ['policy'],
  '/ziti.v1.IdentityAuthService/RenderIdentities': ['policy'],
  '/ziti.v1.IdentityAuthService/ListLegacyApiSessions': ['fabric'],
  '/ziti.v1.IdentityAuthService/TouchApiSessions': ['fabric'],
  '/ziti.v1.IdentityAuthService/GetTokenVerificationKeys': ['fabric'],
  '/ziti.v1.IdentityAuthService/ListRevocations': ['fabric'],
  // pki-enrollment
  '/ziti.v1.PkiEnrollmentService/CreateEnrollment': ['identity-auth'],
  '/ziti.v1.PkiEnrollmentService/ListEnrollments': ['identity-auth'],
  '/ziti.v1.PkiEnrollmentService/DeleteEnrollment': ['identity-auth'],
  '/ziti.v1.PkiEnrollmentService/DeleteIdentityEnrollments': ['identity-auth'],
  '/ziti.v1.PkiEnrollmentService/VerifyClientCertificate': ['identity-auth'],
  '/ziti.v1.PkiEnrollmentService/SignIdentityCsr': ['identity-auth'],
  '/ziti.v1.PkiEnrollmentService/IssueServerCertificate': ['gateway'],
  '/ziti.v1.PkiEnrollmentService/SignSessionTokens': ['session'],
  '/ziti.v1.PkiEnrollmentService/GetSigningCertificate': ['policy', 'session', 'fabric'],
  '/ziti.v1.PkiEnrollmentService/CreateRouterEnrollment': ['policy'],
  '/ziti.v1.PkiEnrollmentService/GetRouterEnrollment': ['policy', 'fabric'],
  '/ziti.v1.PkiEnrollmentService/DeleteRouterEnrollment': ['policy'],
  '/ziti.v1.PkiEnrollmentService/IssueCtrlCertificate': ['fabric'],
  '/ziti.v1.PkiEnrollmentService/ListApiSessionCertificateFingerprints': ['fabric'],
  // policy
  '/ziti.v1.PolicyService/SyncIdentity': ['identity-auth'],
  '/ziti.v1.PolicyService/SyncPostureCheck': ['posture'],
  '/ziti.v1.PolicyService/GetRoleAttributeUsage': ['identity-auth', 'posture'],
  '/ziti.v1.PolicyService/GetServiceAccess': ['session', 'fabric'],
  '/ziti.v1.PolicyService/ListPostureCheckServices': ['posture'],
  '/ziti.v1.PolicyService/GetRouter': ['fabric'],
  '/ziti.v1.PolicyService/GetRouterDataModel': ['fabric'],
  '/ziti.v1.PolicyService/UpsertEdgeTerminator': ['fabric'],
  '/ziti.v1.PolicyService/UpdateTerminator': ['fabric'],
  '/ziti.v1.PolicyService/RemoveTerminators': ['fabric'],
  '/ziti.v1.PolicyService/ListServiceTerminators': ['fabric'],
  // posture
  '/ziti.v1.PostureService/EvaluatePostureChecks': ['session', 'policy'],
  '/ziti.v1.PostureService/RecordFailedServiceRequest': ['session'],
  // session
  '/ziti.v1.SessionService/GetSessions': ['fabric'],
  // fabric
  '/ziti.v1.FabricService/GetRouterStates': ['policy'],
  '/ziti.v1.FabricService/DisconnectRouter': ['policy'],
  '/ziti.v1.FabricService/GetIdentityConnections': ['identity-auth'],
  '/ziti.v1.FabricService/RelayRoute': ['fabric'],
  '/ziti.v1.FabricService/RelayToRouter': ['fabric'],
  // every context, for the gateway: readiness, counts, snapshots, data integrity
  '/ziti.v1.HealthService/Check': ['gateway'],
  '/ziti.v1.MaintenanceService/CountEntities': ['gateway'],
  '/ziti.v1.MaintenanceService/HoldSnapshot': ['gateway'],
  '/ziti.v1.MaintenanceService/DumpSchema': ['gateway'],
  '/ziti.v1.IntegrityService/CheckIntegrity': ['gateway'],
  '/ziti.v1.IntegrityService/ListReferences': ['gateway'],
  '/ziti.v1.IntegrityService/ExistingIds': ['gateway'],
  '/ziti.v1.IntegrityService/RepairReferences': ['gateway'],
  '/ziti.v1.IntegrityService/ListProjectionSources': ['gateway'],
  '/ziti.v1.IntegrityService/CheckProjection': ['gateway'],
};

/** The context that serves each internal service (a client checks the server's certificate names it). */
export const INTERNAL_SERVICE_OWNERS: Readonly<Record<string, ContextName>> = {
  'ziti.v1.IdentityAuthService': 'identity-auth',
  'ziti.v1.PkiEnrollmentService': 'pki-enrollment',
  'ziti.v1.PolicyService': 'policy',
  'ziti.v1.PostureService': 'posture',
  'ziti.v1.SessionService': 'session',
  'ziti.v1.FabricService': 'fabric',
};

/** Whether `caller` may call the method at `path`. */
export function mayCall(caller: ContextName | undefined, path: string): boolean {
  return caller !== undefined && (INTERNAL_RPC_CALLERS[path]?.includes(caller) ?? false);
}
