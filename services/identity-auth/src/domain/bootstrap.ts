import { shortId } from '@ziti/http-kit';
import { projectionOf } from './identity-projection.js';
import { DEFAULT_AUTH_POLICY_ID } from './identity-rules.js';
import { PASSWORD_MAX, PASSWORD_MIN, USERNAME_MAX, USERNAME_MIN, generatePassword, hashPassword } from './password.js';
import type { UnitOfWork } from './ports.js';

export interface DefaultAdminSpec {
  username: string;
  /** When absent a strong password is generated and handed to `storeGenerated` once. */
  password?: string;
  name?: string;
}

export const DEFAULT_ADMIN_NAME = 'Default Admin';
const NAME_MIN = 4;
const NAME_MAX = 100;

/** Limits of `ziti controller edge init` (§6.9); a violation is a configuration error. */
export function validateDefaultAdminSpec(spec: DefaultAdminSpec): void {
  const check = (what: string, v: string, min: number, max: number) => {
    if (v.length < min || v.length > max) throw new Error(`default admin ${what} must be ${min} to ${max} characters long`);
  };
  check('username (ZITI_USER)', spec.username, USERNAME_MIN, USERNAME_MAX);
  if (spec.password !== undefined) check('password (ZITI_PWD)', spec.password, PASSWORD_MIN, PASSWORD_MAX);
  if (spec.name !== undefined) check('name', spec.name, NAME_MIN, NAME_MAX);
}

export interface BootstrapResult {
  created: boolean;
  identityId: string;
}

/**
 * Creates the default admin (`isDefaultAdmin`, `isAdmin`, type Default, an updb authenticator)
 * unless one exists. Safe with several replicas starting at once: the check and the insert run
 * under a cross-replica lock. An existing admin is never touched: changing ZITI_PWD later does not
 * rewrite its password. A generated password reaches `storeGenerated` inside the transaction, so
 * it is stored before the admin becomes usable.
 */
export async function ensureDefaultAdmin(
  uow: UnitOfWork,
  spec: DefaultAdminSpec,
  storeGenerated: (password: string) => Promise<void>,
): Promise<BootstrapResult> {
  validateDefaultAdminSpec(spec);
  return uow.run(async (tx) => {
    await tx.lock('default-admin');
    const existing = await tx.identities.findDefaultAdmin();
    if (existing) return { created: false, identityId: existing.id };
    const password = spec.password ?? generatePassword();
    const hashed = await hashPassword(password);
    const id = shortId();
    await tx.identities.create({
      id,
      name: spec.name ?? DEFAULT_ADMIN_NAME,
      typeId: 'Default',
      isAdmin: true,
      isDefaultAdmin: true,
      roleAttributes: [],
      tags: {},
      appData: {},
      authPolicyId: DEFAULT_AUTH_POLICY_ID,
      externalId: null,
      defaultHostingPrecedence: 'default',
      defaultHostingCost: 0,
      serviceHostingPrecedences: {},
      serviceHostingCosts: {},
      permissions: [],
    });
    await tx.authenticators.create({ id: shortId(), identityId: id, method: 'updb', username: spec.username, ...hashed, tags: {} });
    await tx.emit({ type: 'identity.created', identity: projectionOf((await tx.identities.findById(id))!) });
    if (spec.password === undefined) await storeGenerated(password);
    return { created: true, identityId: id };
  });
}
