import { X509Certificate } from 'node:crypto';
import { ApiError } from '@ziti/errors';
import { shortId } from '@ziti/http-kit';
import type { AuthenticatorView } from './auth-model.js';
import { certFingerprint, parseSingleCertificate } from './ext-jwt/signer-rules.js';
import type { SessionEnder } from './credential-reset.js';
import type { JsonMap, ListRequest, Page } from './model.js';
import { USERNAME_MAX, USERNAME_MIN, checkPasswordRules, hashPassword, verifyPassword } from './password.js';
import type { StoredAuthenticator, UnitOfWork } from './ports.js';

/** `authenticatorCreate` / `Update` / `Patch` (and the self-service `…WithCurrent`) as handed over. */
export interface AuthenticatorInput {
  method?: string;
  identityId?: string;
  username?: string | null;
  password?: string | null;
  certPem?: string;
  currentPassword?: string;
  tags?: JsonMap | null;
}

const METHODS = ['updb', 'cert'] as const;

function checkUsername(username: string | null | undefined): string {
  if (typeof username !== 'string' || username === '') throw ApiError.field('username', 'username in body is required', username ?? '');
  if (username.length < USERNAME_MIN || username.length > USERNAME_MAX) {
    throw ApiError.field('username', `username in body should be between ${USERNAME_MIN} and ${USERNAME_MAX} characters`, username);
  }
  return username;
}

const present = (v: unknown) => v !== undefined && v !== null;

/** The first certificate of a PEM bundle (the leaf of an issued chain), if it parses. */
function firstCertificate(pem: string): X509Certificate | null {
  const block = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/)?.[0];
  if (!block) return null;
  try {
    return new X509Certificate(block);
  } catch {
    return null;
  }
}

/**
 * Authenticators (§1.2): the management CRUD (updb and cert; at most one per method and identity)
 * and the self-service views of `/current-identity/authenticators`, where changes need the current
 * password. Password rules come from the identity's auth policy; hashes and salts never leave.
 * A password set by an admin ends every session of the identity; a password its owner changes
 * ends every session but the one it was changed through (`sessions`).
 */
export class AuthenticatorManager {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly sessions?: SessionEnder,
  ) {}

  list(req: ListRequest, identityId?: string): Promise<Page<AuthenticatorView>> {
    return this.uow.repos.authenticators.list(req, identityId);
  }

  async listOfIdentity(identityId: string): Promise<AuthenticatorView[]> {
    if (!(await this.uow.repos.identities.findById(identityId))) throw ApiError.notFound();
    return this.uow.repos.authenticators.listOfIdentity(identityId);
  }

  /** `ownerId` restricts to the caller's own authenticators (another's is 404). */
  async detail(id: string, ownerId?: string): Promise<AuthenticatorView> {
    const view = await this.uow.repos.authenticators.view(id);
    if (!view || (ownerId !== undefined && view.identityId !== ownerId)) throw ApiError.notFound();
    return view;
  }

  async create(input: AuthenticatorInput): Promise<string> {
    const method = input.method ?? '';
    if (!(METHODS as readonly string[]).includes(method)) {
      throw ApiError.field('method', `method in body should be one of [${METHODS.join(' ')}]`, method);
    }
    const identityId = input.identityId ?? '';
    const id = shortId();
    const tags = input.tags ?? {};
    if (method === 'cert') {
      if (!input.certPem) throw ApiError.field('certPem', 'certPem in body is required');
      const fingerprint = certFingerprint(parseSingleCertificate(input.certPem));
      await this.uow.run(async (tx) => {
        if (!(await tx.identities.findById(identityId))) throw ApiError.notFound();
        await tx.authenticators.create({ id, identityId, method: 'cert', certPem: input.certPem, fingerprint, tags });
      });
      return id;
    }
    const username = checkUsername(input.username);
    if (!input.password) throw ApiError.field('password', 'password in body is required');
    await this.checkPassword(identityId, input.password);
    const hashed = await hashPassword(input.password);
    await this.uow.run(async (tx) => {
      if (!(await tx.identities.findById(identityId))) throw ApiError.notFound();
      await tx.authenticators.create({ id, identityId, method: 'updb', username, ...hashed, tags });
    });
    return id;
  }

  /**
   * `CreateCertAuthenticator` (pki-enrollment's ott and ottca flows): the enrolled certificate
   * (the leaf of `certPem`) becomes the identity's cert authenticator. Unknown identity → 404,
   * fingerprint in use → 409 CERT_IN_USE, a second cert authenticator → 409 MAX_AUTHENTICATOR_METHODS_REACHED.
   */
  async createCert(req: { identityId: string; certPem: string; fingerprint: string; isIssuedByNetwork: boolean; caId: string | null }): Promise<{ id: string; fingerprint: string }> {
    const leaf = firstCertificate(req.certPem);
    const fingerprint = leaf ? certFingerprint(leaf) : req.fingerprint;
    if (!fingerprint) throw ApiError.field('certPem', 'a PEM certificate is required', '');
    const id = shortId();
    await this.uow.run(async (tx) => {
      if (!(await tx.identities.findById(req.identityId))) throw ApiError.notFound();
      await tx.authenticators.create({
        id, identityId: req.identityId, method: 'cert', certPem: leaf ? leaf.toString() : req.certPem, fingerprint,
        isIssuedByNetwork: req.isIssuedByNetwork, caId: req.caId, tags: {},
      });
    });
    return { id, fingerprint };
  }

  /** `CreateUpdbAuthenticator` (updb enrollment): the same rules as a management create. */
  createUpdb(req: { identityId: string; username: string; password: string }): Promise<string> {
    return this.create({ method: 'updb', identityId: req.identityId, username: req.username, password: req.password });
  }

  /** Deleting a CA deletes the certificate authenticators it issued (idempotent). */
  deleteByCa(caId: string): Promise<number> {
    return this.uow.run((tx) => tx.authenticators.deleteByCa(caId));
  }

  /** Management PUT (`full`) or PATCH. A cert authenticator only takes tags: 409 otherwise. A new password ends every session of the identity. */
  async update(id: string, input: AuthenticatorInput, full: boolean): Promise<void> {
    const current = await this.uow.repos.authenticators.find(id);
    if (!current) throw ApiError.notFound();
    await this.apply(current, input, full);
  }

  /**
   * Self-service PUT/PATCH: only the caller's own updb authenticator, with the right current
   * password. A new password ends the identity's other sessions; the caller's (`currentSessionId`) stays.
   */
  async updateOwn(ownerId: string, id: string, input: AuthenticatorInput, full: boolean, currentSessionId: string): Promise<void> {
    const current = await this.uow.repos.authenticators.find(id);
    if (!current || current.identityId !== ownerId) throw ApiError.notFound();
    if (current.method !== 'updb') throw ApiError.of('CAN_NOT_UPDATE_AUTHENTICATOR');
    const ok = await verifyPassword(input.currentPassword ?? '', { password: current.password ?? '', salt: current.salt ?? '' });
    if (!ok) throw ApiError.of('UNAUTHORIZED');
    await this.apply(current, input, full, currentSessionId);
  }

  async delete(id: string): Promise<void> {
    await this.uow.run(async (tx) => {
      if (!(await tx.authenticators.delete(id))) throw ApiError.notFound();
    });
  }

  /** Applies the change; a new password ends the identity's sessions (all, or all but `keepSessionId`). */
  private async apply(current: StoredAuthenticator, input: AuthenticatorInput, full: boolean, keepSessionId?: string): Promise<void> {
    const change: { username?: string; password?: string; salt?: string; tags?: JsonMap } = {};
    if (full || present(input.tags)) change.tags = input.tags ?? {};
    if (current.method !== 'updb') {
      if (present(input.username) || present(input.password)) throw ApiError.of('CAN_NOT_UPDATE_AUTHENTICATOR');
    } else {
      if (full || present(input.username)) change.username = checkUsername(input.username);
      if (full || present(input.password)) {
        if (!input.password) throw ApiError.field('password', 'password in body is required');
        await this.checkPassword(current.identityId, input.password);
        Object.assign(change, await hashPassword(input.password));
      }
    }
    const ended = await this.uow.run(async (tx) => {
      if (!(await tx.authenticators.find(current.id))) throw ApiError.notFound();
      await tx.authenticators.update(current.id, change);
      return change.password !== undefined ? this.sessions?.endIn(tx, current.identityId, keepSessionId) : undefined;
    });
    await this.sessions?.after(ended);
  }

  /** The password rules of the identity's auth policy (an unknown identity is 404). */
  private async checkPassword(identityId: string, password: string): Promise<void> {
    const identity = await this.uow.repos.identities.findById(identityId);
    if (!identity) throw ApiError.notFound();
    const policy = await this.uow.repos.authPolicies.findById(identity.authPolicyId);
    if (policy) checkPasswordRules(password, policy);
  }
}
