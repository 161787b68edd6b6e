import { ApiError } from '@ziti/errors';
import { shortId } from '@ziti/http-kit';
import {
  type Actor,
  DEFAULT_AUTH_POLICY_ID,
  type IdentityInput,
  assertMayPatch,
  assertMayPut,
  assertMayWrite,
  fullFields,
  mayAffect,
  patchedFields,
} from './identity-rules.js';
import { type CaIdentityRequest, numberedName, withIdentityId } from './ca-identity.js';
import type { Identity, IdentityFields, IdentityTrace, IdentityView, ListRequest, Page, RoleFilter } from './model.js';
import { type TraceSpecInput, traceOfSpec } from './trace.js';
import { isDisabled } from './model.js';
import type { EnrollmentInfo, NewEnrollment, PkiContext } from './pki-context.js';
import { type FabricContext, withExtras } from './identity-extras.js';
import { projectionOf } from './identity-projection.js';
import type { DomainEvent, PolicyContext, PrincipalCache, Revocation, RevocationWriter, Transaction, UnitOfWork } from './ports.js';

/** The longest lock a disable takes: about 292 years, the longest duration OpenZiti's controller can hold (Go's time.Duration). */
const MAX_DISABLE_MINUTES = 153_722_867;

/** `enrollment` of an identity create: the enrollments pki-enrollment creates with it. */
export interface EnrollmentRequest {
  ott?: boolean;
  /** The CA of an `ottca` enrollment. */
  ottca?: string;
  /** The username of an `updb` enrollment. */
  updb?: string;
}

/** The identity a token enrollment creates (see `TokenEnrollment`). */
export interface TokenIdentityRequest {
  /** Assigned before the CSR is signed: the certificate's SPIFFE id names it. */
  id: string;
  name: string;
  roleAttributes: string[];
  externalId: string;
  authPolicyId: string;
  /** The certificate signed from the enrollment's CSR (chain PEM), or null for token authentication. */
  cert: { certPem: string; fingerprint: string } | null;
}

interface Committed {
  identity: Identity;
  tokens: string[];
  deleted?: boolean;
  /** Written in the transaction; their markers are set after commit. */
  revocations?: Revocation[];
  /** What its principals show changed: a new principal generation drops the bearer principals gateways cached. */
  renew?: boolean;
}

/**
 * Management of identities: CRUD with the controller's rules, disable/enable (and the password
 * lockout), events, cache invalidation, and the synchronous projection to the policy context.
 * After every committed change the principals of the identity's sessions are dropped from the
 * gateways' cache and the policy context gets the new projection before the caller is answered
 * (the outbox event converges it if that call fails).
 */
export class IdentityManager {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly cache: PrincipalCache,
    private readonly policy: PolicyContext,
    private readonly pki: PkiContext,
    /** IDENTITY revocations of OIDC tokens when an identity is deleted or becomes disabled (OIDC.md "Revocations"). */
    private readonly revocations?: RevocationWriter,
    /** Edge router connections of the identities shown (`hasEdgeRouterConnection`); none without it. */
    private readonly fabric?: FabricContext,
  ) {}

  /**
   * A page of identities, each with its outstanding enrollments and its edge router connection
   * (one pki-enrollment and one fabric call per page).
   */
  async list(req: ListRequest, roleFilter?: RoleFilter): Promise<Page<IdentityView>> {
    const page = await this.uow.repos.identities.list(req, roleFilter);
    return { ...page, items: await withExtras(page.items, this.pki, this.fabric) };
  }

  async detail(id: string): Promise<IdentityView> {
    const view = await this.uow.repos.identities.view(id);
    if (!view) throw ApiError.notFound();
    return (await withExtras([view], this.pki, this.fabric))[0]!;
  }

  /**
   * The views of these identities (those that exist, in the order given), with their enrollments,
   * for other contexts' association lists (`RenderIdentities`): one pki-enrollment call for all.
   */
  async views(ids: readonly string[]): Promise<IdentityView[]> {
    return withExtras(await this.uow.repos.identities.views(ids), this.pki, this.fabric);
  }

  /** These identities (those that exist, in the order given), without their enrollments (`GetIdentities`). */
  findMany(ids: readonly string[]): Promise<Identity[]> {
    return this.uow.repos.identities.views(ids);
  }

  async find(id: string): Promise<Identity> {
    const identity = await this.uow.repos.identities.findById(id);
    if (!identity) throw ApiError.notFound();
    return identity;
  }

  /**
   * Creates an identity and, in the same transaction, the enrollments `enrollment` asks for
   * (pki-enrollment vouched by identity-auth). An enrollment refused rolls the identity back; an
   * identity that fails to commit after its enrollments were created has them deleted again.
   */
  async create(actor: Actor, input: IdentityInput, enrollment: EnrollmentRequest = {}): Promise<string> {
    const fields = fullFields(input);
    assertMayWrite(actor, fields, null);
    const id = shortId();
    const wanted: NewEnrollment[] = [];
    if (enrollment.ott) wanted.push({ identityId: id, method: 'ott', identityName: fields.name });
    if (enrollment.ottca) wanted.push({ identityId: id, method: 'ottca', caId: enrollment.ottca, identityName: fields.name });
    if (enrollment.updb) wanted.push({ identityId: id, method: 'updb', username: enrollment.updb, identityName: fields.name });
    const created: string[] = [];
    try {
      await this.commit(async (tx) => {
        await checkReferences(tx, fields);
        await tx.identities.create({ ...fields, id, isDefaultAdmin: false });
        const identity = (await tx.identities.findById(id))!;
        await tx.emit({ type: 'identity.created', identity: projectionOf(identity) });
        for (const e of wanted) created.push((await this.pki.createEnrollment(e)).id);
        return { identity, tokens: [] };
      });
    } catch (err) {
      for (const enrollmentId of created) await this.pki.deleteEnrollment(enrollmentId);
      throw err;
    }
    return id;
  }

  /**
   * CA auto-enrollment (`CreateIdentityFromCa`, or a certificate login by an unknown device of a
   * CA that allows it): a Default, non-admin identity with the CA's roles, named by the CA's format
   * (`[identityId]` = the id assigned here; a taken name gets a six-digit counter), with a cert
   * authenticator unless it authenticates by `externalId`.
   */
  async createFromCa(req: CaIdentityRequest): Promise<Identity> {
    const id = shortId();
    const base = withIdentityId(req.name, id);
    let created: Identity | undefined;
    await this.commit(async (tx) => {
      await tx.lock(`identity-name:${base}`);
      let name = base;
      for (let n = 1; await tx.identities.nameTaken(name); n++) name = numberedName(base, n);
      const policyId = req.authPolicyId && (await tx.authPolicies.findById(req.authPolicyId)) ? req.authPolicyId : DEFAULT_AUTH_POLICY_ID;
      const fields = fullFields({ name, type: 'Default', isAdmin: false, roleAttributes: req.roleAttributes, externalId: req.externalId || null, authPolicyId: policyId });
      await tx.identities.create({ ...fields, id, isDefaultAdmin: false });
      if (!req.externalId) {
        await tx.authenticators.create({
          id: shortId(), identityId: id, method: 'cert', certPem: req.certPem, fingerprint: req.fingerprint, isIssuedByNetwork: false, caId: req.caId, tags: {},
        });
      }
      created = (await tx.identities.findById(id))!;
      await tx.emit({ type: 'identity.created', identity: projectionOf(created) });
      return { identity: created, tokens: [] };
    });
    return created!;
  }

  /**
   * Token enrollment (`POST /enroll/token`): a Default, non-admin identity that ext-jwt login finds
   * by `externalId`, with a cert authenticator (issued by the network) when it enrolled with a CSR.
   * One identity per externalId: the check runs again under a lock on it, so of two concurrent
   * enrollments of one token the second is 409 ENROLLMENT_IDENTITY_ALREADY_ENROLLED. A taken name
   * is the identity create's field error (`name must be unique`).
   */
  async createFromToken(req: TokenIdentityRequest): Promise<Identity> {
    let created: Identity | undefined;
    await this.commit(async (tx) => {
      await tx.lock(`identity-external-id:${req.externalId}`);
      if (await tx.identities.findByExternalId(req.externalId)) throw ApiError.of('ENROLLMENT_IDENTITY_ALREADY_ENROLLED');
      const fields = fullFields({
        name: req.name, type: 'Default', isAdmin: false, roleAttributes: req.roleAttributes, externalId: req.externalId, authPolicyId: req.authPolicyId,
      });
      await checkReferences(tx, fields);
      await tx.identities.create({ ...fields, id: req.id, isDefaultAdmin: false });
      if (req.cert) {
        await tx.authenticators.create({
          id: shortId(), identityId: req.id, method: 'cert', certPem: req.cert.certPem, fingerprint: req.cert.fingerprint, isIssuedByNetwork: true, tags: {},
        });
      }
      created = (await tx.identities.findById(req.id))!;
      await tx.emit({ type: 'identity.created', identity: projectionOf(created) });
      return { identity: created, tokens: [] };
    });
    return created!;
  }

  /** PUT: every updatable field is replaced; omitted ones are cleared or defaulted. Admins only. */
  update(actor: Actor, id: string, input: IdentityInput): Promise<void> {
    assertMayPut(actor);
    return this.change(actor, id, () => fullFields(input));
  }

  /** PATCH: only the fields present in the body change. */
  patch(actor: Actor, id: string, input: IdentityInput): Promise<void> {
    assertMayPatch(actor, input);
    return this.change(actor, id, (current) => patchedFields(current, input));
  }

  async delete(actor: Actor, id: string): Promise<void> {
    await this.commit(async (tx) => {
      const current = await tx.identities.findByIdForUpdate(id);
      if (!current) throw ApiError.notFound();
      if (current.isDefaultAdmin) throw ApiError.of('ENTITY_CAN_NOT_BE_DELETED');
      assertMayWrite(actor, null, current);
      return this.deleteIn(tx, current);
    });
    await this.pki.deleteIdentityEnrollments(id);
  }

  /**
   * `EnsureRouterIdentity` (policy, tunneler-enabled edge router, §5.4): creates the router's
   * identity (id = router id, type Router, not admin, default auth policy) or renames it. Idempotent;
   * an identity of another type with that id is refused.
   */
  async ensureRouterIdentity(routerId: string, name: string): Promise<Identity> {
    if (!routerId) throw ApiError.field('routerId', 'routerId is required', routerId);
    let result: Identity | undefined;
    await this.commit(async (tx) => {
      await tx.lock(`router-identity:${routerId}`);
      const current = await tx.identities.findByIdForUpdate(routerId);
      if (current && current.typeId !== 'Router') throw ApiError.field('routerId', 'an identity that is not of type Router has this id', routerId);
      if (!current) {
        await tx.identities.create({ ...fullFields({ name, type: 'Router', isAdmin: false }), id: routerId, isDefaultAdmin: false });
        result = (await tx.identities.findById(routerId))!;
        await tx.emit({ type: 'identity.created', identity: projectionOf(result) });
        return { identity: result, tokens: [] };
      }
      if (current.name === name) {
        result = current;
        return null;
      }
      result = await tx.identities.update(routerId, { ...current, name: fullFields({ name, type: 'Router' }).name });
      const tokens = await tx.apiSessions.tokensOfIdentity(routerId);
      await tx.emit({ type: 'identity.updated', identity: projectionOf(result), tokens });
      return { identity: result, tokens };
    });
    return result!;
  }

  /** `DeleteRouterIdentity` (policy): deletes the router's identity when it exists and is of type Router. */
  async deleteRouterIdentity(routerId: string): Promise<boolean> {
    let deleted = false;
    await this.commit(async (tx) => {
      const current = await tx.identities.findByIdForUpdate(routerId);
      if (!current || current.typeId !== 'Router') return null;
      deleted = true;
      return this.deleteIn(tx, current);
    });
    if (deleted) await this.pki.deleteIdentityEnrollments(routerId);
    return deleted;
  }

  /**
   * Disables an identity for `durationMinutes` (0 = until enabled): its API sessions end at once
   * (deleted, cached principals dropped, `identity.disabled` to every gateway).
   */
  async disable(actor: Actor, id: string, durationMinutes: number): Promise<void> {
    if (!Number.isInteger(durationMinutes) || durationMinutes < 0) {
      throw ApiError.field('durationMinutes', 'durationMinutes in body should be greater than or equal to 0', durationMinutes);
    }
    if (durationMinutes > MAX_DISABLE_MINUTES) {
      throw ApiError.field('durationMinutes', `durationMinutes in body should be less than or equal to ${MAX_DISABLE_MINUTES}`, durationMinutes);
    }
    await this.commit((tx) => this.disableIn(tx, id, durationMinutes, actor));
  }

  /** The password lockout (no actor: the policy decides). */
  async lockout(id: string, durationMinutes: number): Promise<void> {
    await this.commit((tx) => this.disableIn(tx, id, durationMinutes, null));
  }

  /**
   * `PUT /identities/{id}/trace`: starts (or, when not `enabled`, ends) the tracing of the identity's
   * requests. The trace is stored with the identity and travels in its principals, so the cached
   * principals of its sessions are dropped (after commit, and through `identity.updated` on every
   * gateway): the very next request is traced, or no longer is. Answers the trace, or null.
   */
  async trace(actor: Actor, id: string, spec: TraceSpecInput): Promise<IdentityTrace | null> {
    const trace = traceOfSpec(spec);
    const tokens = await this.uow.run(async (tx) => {
      const identity = await tx.identities.findByIdForUpdate(id);
      if (!identity) throw ApiError.notFound();
      if (!mayAffect(actor, identity)) throw ApiError.of('UNAUTHORIZED');
      await tx.identities.setTrace(id, trace);
      const tokens = await tx.apiSessions.tokensOfIdentity(id);
      await tx.emit({ type: 'identity.updated', identity: projectionOf(identity), tokens });
      return tokens;
    });
    await this.cache.drop(tokens);
    await this.cache.renew([id]);
    return trace;
  }

  async enable(actor: Actor, id: string): Promise<void> {
    await this.commit(async (tx) => {
      const current = await tx.identities.findByIdForUpdate(id);
      if (!current) throw ApiError.notFound();
      if (!mayAffect(actor, current)) throw ApiError.of('UNAUTHORIZED');
      const identity = await tx.identities.enable(id);
      await tx.emit({ type: 'identity.updated', identity: projectionOf(identity), tokens: [] });
      return { identity, tokens: [] };
    });
  }

  /** Clears lockouts whose `disabledUntil` has passed (so every projection says enabled again). */
  async enableExpired(batch = 200): Promise<number> {
    const enabled = await this.uow.run(async (tx) => {
      const identities = await tx.identities.enableExpired(new Date(), batch);
      await tx.emit(...identities.map((i): DomainEvent => ({ type: 'identity.updated', identity: projectionOf(i), tokens: [] })));
      return identities;
    });
    for (const identity of enabled) await this.policy.syncIdentity(projectionOf(identity), false);
    return enabled.length;
  }

  /** Removes any TOTP enrollment of the identity (admin operation, `identity.update`). */
  async removeMfa(actor: Actor, id: string): Promise<void> {
    await this.uow.run(async (tx) => {
      const current = await tx.identities.findByIdForUpdate(id);
      if (!current) throw ApiError.notFound();
      if (!mayAffect(actor, current)) throw ApiError.of('UNAUTHORIZED');
      await tx.mfas.deleteByIdentity(id);
    });
  }

  private async disableIn(tx: Transaction, id: string, minutes: number, actor: Actor | null): Promise<Committed> {
    const current = await tx.identities.findByIdForUpdate(id);
    if (!current) throw ApiError.notFound();
    if (actor && !mayAffect(actor, current)) throw ApiError.of('UNAUTHORIZED');
    const identity = await tx.identities.disable(id, minutes > 0 ? minutes : null);
    const tokens = await endSessions(tx, id);
    await tx.emit({ type: 'identity.disabled', identity: projectionOf(identity), tokens });
    // Only the transition into the disabled state revokes (as OpenZiti's IdentityRevocationConstraint).
    const revocations = !isDisabled(current) ? await this.revokeIdentity(tx, id) : [];
    return { identity, tokens, revocations };
  }

  /** Deletes the identity with its sessions, with `identity.deleted` and an IDENTITY revocation. */
  private async deleteIn(tx: Transaction, current: Identity): Promise<Committed> {
    const tokens = await endSessions(tx, current.id);
    await tx.identities.delete(current.id);
    const gone = { ...current, updatedAt: new Date() };
    await tx.emit({ type: 'identity.deleted', identity: projectionOf(gone), tokens });
    return { identity: gone, tokens, deleted: true, revocations: await this.revokeIdentity(tx, current.id) };
  }

  private async revokeIdentity(tx: Transaction, id: string): Promise<Revocation[]> {
    return this.revocations ? [await this.revocations.revokeIn(tx, 'IDENTITY', id)] : [];
  }

  private async change(actor: Actor, id: string, next: (current: IdentityFields) => IdentityFields): Promise<void> {
    await this.commit(async (tx) => {
      const current = await tx.identities.findByIdForUpdate(id);
      if (!current) throw ApiError.notFound();
      const fields = next(current);
      assertMayWrite(actor, fields, current);
      if (fields.authPolicyId !== current.authPolicyId) await checkReferences(tx, fields);
      const identity = await tx.identities.update(id, fields);
      const tokens = await tx.apiSessions.tokensOfIdentity(id);
      await tx.emit({ type: 'identity.updated', identity: projectionOf(identity), tokens });
      return { identity, tokens, renew: true };
    });
  }

  /** Runs the change, then drops the affected principals and syncs the policy projection (`null`: nothing changed). */
  private async commit(fn: (tx: Transaction) => Promise<Committed | null>): Promise<void> {
    const done = await this.uow.run(fn);
    if (!done) return;
    await this.cache.drop(done.tokens);
    if (done.renew) await this.cache.renew([done.identity.id]);
    if (done.revocations?.length) await this.revocations?.mark(done.revocations);
    await this.policy.syncIdentity(projectionOf(done.identity), done.deleted === true);
  }
}

/** Deletes the identity's sessions (one `api-session.deleted` each); returns their tokens. */
async function endSessions(tx: Transaction, identityId: string): Promise<string[]> {
  const sessions = await tx.apiSessions.deleteByIdentity(identityId);
  await tx.emit(...sessions.map((s): DomainEvent => ({ type: 'api-session.deleted', apiSessionId: s.id, identityId, tokens: [s.token] })));
  return sessions.map((s) => s.token);
}

async function checkReferences(tx: Transaction, fields: IdentityFields): Promise<void> {
  if (!(await tx.authPolicies.findById(fields.authPolicyId))) {
    throw ApiError.field('authPolicyId', 'no auth policy found with the given id', fields.authPolicyId);
  }
}
