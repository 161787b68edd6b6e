import { ApiError } from '@ziti/errors';
import { shortId } from '@ziti/http-kit';
import type { ExternalJwtSigner, ExternalJwtSignerFields } from '../auth-model.js';
import { referencedError } from '../auth-policy-manager.js';
import type { Actor } from '../identity-rules.js';
import type { ListRequest, Page } from '../model.js';
import type { OutboundUrlCheck, Transaction, UnitOfWork } from '../ports.js';
import { type SignerInput, checkSigner, fullSigner, patchedSigner } from './signer-rules.js';

/**
 * Management of external JWT signers; the anonymous client list shows the enabled ones. Every
 * create, update and patch checks where `jwksEndpoint` points (`checkUrl`) before it writes.
 */
export class SignerManager {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly checkUrl: OutboundUrlCheck,
  ) {}

  list(req: ListRequest, enabledOnly = false): Promise<Page<ExternalJwtSigner>> {
    return this.uow.repos.signers.list(req, enabledOnly);
  }

  async detail(id: string): Promise<ExternalJwtSigner> {
    const s = await this.uow.repos.signers.findById(id);
    if (!s) throw ApiError.notFound();
    return s;
  }

  /** `actor`: who writes; a non-admin's signer is not trusted to log in privileged identities. */
  async create(actor: Actor, input: SignerInput): Promise<string> {
    const fields = fullSigner(input);
    const cert = checkSigner(fields);
    if (fields.jwksEndpoint) await this.checkUrl('jwksEndpoint', fields.jwksEndpoint);
    const id = shortId();
    await this.uow.run(async (tx) => {
      await checkPolicyRef(tx, fields);
      await tx.signers.create(id, fields, cert, actor.isAdmin);
    });
    return id;
  }

  update(actor: Actor, id: string, input: SignerInput): Promise<void> {
    return this.change(actor, id, () => fullSigner(input));
  }

  patch(actor: Actor, id: string, input: SignerInput): Promise<void> {
    return this.change(actor, id, (current) => patchedSigner(current, input));
  }

  /** A signer named by an auth policy (allowed or required) is referenced: 409. */
  async delete(id: string): Promise<void> {
    await this.uow.run(async (tx) => {
      await tx.lock('external-jwt-signers');
      if (!(await tx.signers.findById(id))) throw ApiError.notFound();
      const policies = await tx.authPolicies.idsReferencingSigner(id);
      if (policies.length > 0) throw referencedError('externalJwtSigners', 'authPolicies', 'authPolicies', policies);
      await tx.signers.delete(id);
    });
  }

  /**
   * Principals of sessions that need this signer as second factor are never cached (they depend on
   * each request's bearer token), so a change takes effect on the very next request. A change by a
   * non-admin withdraws the signer's trust for privileged identities; an admin's change restores it.
   */
  private async change(actor: Actor, id: string, next: (current: ExternalJwtSignerFields) => ExternalJwtSignerFields): Promise<void> {
    await this.uow.run(async (tx) => {
      await tx.lock('external-jwt-signers');
      const current = await tx.signers.findById(id);
      if (!current) throw ApiError.notFound();
      const fields = next(current);
      const cert = checkSigner(fields);
      if (fields.jwksEndpoint) await this.checkUrl('jwksEndpoint', fields.jwksEndpoint);
      await checkPolicyRef(tx, fields);
      await tx.signers.update(id, fields, cert, actor.isAdmin);
    });
  }
}

async function checkPolicyRef(tx: Transaction, f: ExternalJwtSignerFields): Promise<void> {
  if (f.enrollAuthPolicyId && !(await tx.authPolicies.findById(f.enrollAuthPolicyId))) {
    throw ApiError.field('enrollAuthPolicyId', 'no auth policy found with the given id', f.enrollAuthPolicyId);
  }
}
