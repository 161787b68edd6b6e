import type { IdentityView } from './model.js';
import type { EnrollmentInfo, PkiContext } from './pki-context.js';

/**
 * The fabric context (the router control plane) as identity-auth needs it: which identities an
 * edge router reported connected (`hasEdgeRouterConnection`). Never throws: when fabric is not
 * configured, unreachable or does not answer, no identity is connected.
 */
export interface FabricContext {
  connectedIdentities(identityIds: readonly string[]): Promise<Set<string>>;
}

/**
 * What identity views show from other contexts: the outstanding enrollments (pki-enrollment; none
 * when it is unavailable) and whether an edge router reported the identity connected (fabric;
 * false when it is unavailable or not given). One call of each per page, at once.
 */
export async function withExtras(views: IdentityView[], pki: Pick<PkiContext, 'listEnrollments'>, fabric?: FabricContext): Promise<IdentityView[]> {
  const ids = views.map((v) => v.id);
  const [all, connected] = await Promise.all([
    pki.listEnrollments(ids),
    fabric && ids.length > 0 ? fabric.connectedIdentities(ids) : Promise.resolve(new Set<string>()),
  ]);
  const byIdentity = new Map<string, EnrollmentInfo[]>();
  for (const e of all ?? []) byIdentity.set(e.identityId, [...(byIdentity.get(e.identityId) ?? []), e]);
  return views.map((v) => ({ ...v, enrollments: byIdentity.get(v.id) ?? [], hasEdgeRouterConnection: connected.has(v.id) }));
}
