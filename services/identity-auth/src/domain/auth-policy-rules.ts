import { ApiError } from '@ziti/errors';
import { normalizeName } from '@ziti/http-kit';
import type { AuthPolicyFields } from './auth-model.js';
import type { JsonMap } from './model.js';
import { PASSWORD_MIN } from './password.js';

/** `authPolicyCreate` / `authPolicyUpdate` / `authPolicyPatch` as the HTTP layer hands them over. */
export interface AuthPolicyInput {
  name?: string | null;
  primary?: {
    cert?: { allowed?: boolean | null; allowExpiredCerts?: boolean | null } | null;
    extJwt?: { allowed?: boolean | null; allowedSigners?: string[] | null } | null;
    updb?: {
      allowed?: boolean | null;
      minPasswordLength?: number | null;
      requireSpecialChar?: boolean | null;
      requireNumberChar?: boolean | null;
      requireMixedCase?: boolean | null;
      maxAttempts?: number | null;
      lockoutDurationMinutes?: number | null;
    } | null;
  } | null;
  secondary?: { requireTotp?: boolean | null; requireExtJwtSigner?: string | null } | null;
  tags?: JsonMap | null;
}

/** Values below the minimum fall back as the controller's do: 0 attempts = unlimited, 0 minutes = until enabled. */
export const clampMinPasswordLength = (n: number) => (n < PASSWORD_MIN ? PASSWORD_MIN : n);
export const clampMaxAttempts = (n: number) => (n < 0 ? 0 : n);
export const clampLockoutMinutes = (n: number) => (n < 0 ? 0 : n);

/** The updb counts are stored as 32-bit integers; a larger one is a field error, not a database error. */
const INT32_MAX = 2_147_483_647;
const UPDB_COUNTS = [
  ['minPasswordLength', 'primaryUpdbMinPasswordLength'],
  ['maxAttempts', 'primaryUpdbMaxAttempts'],
  ['lockoutDurationMinutes', 'primaryUpdbLockoutDurationMinutes'],
] as const;

function withinRange(fields: AuthPolicyFields): AuthPolicyFields {
  for (const [name, key] of UPDB_COUNTS) {
    if (fields[key] > INT32_MAX) {
      throw ApiError.field(`primary.updb.${name}`, `primary.updb.${name} in body should be less than or equal to ${INT32_MAX}`, fields[key]);
    }
  }
  return fields;
}

/** The name in its stored form (`normalizeName`); empty or only white space → 400 as a missing name. */
function requireName(name: string | null | undefined): string {
  const normalized = typeof name === 'string' ? normalizeName(name) : '';
  if (normalized === '') throw ApiError.field('name', 'name in body is required', name ?? '');
  return normalized;
}

const signers = (ids: string[] | null | undefined) => [...new Set(ids ?? [])];
const signer = (id: string | null | undefined) => (id === undefined || id === null || id === '' ? null : id);
const tags = (t: JsonMap | null | undefined): JsonMap => (t && typeof t === 'object' ? { ...t } : {});

/** Create and PUT: every field from the (schema-checked) body. */
export function fullAuthPolicy(input: AuthPolicyInput): AuthPolicyFields {
  const p = input.primary ?? {};
  const updb = p.updb ?? {};
  return withinRange({
    name: requireName(input.name),
    primaryCertAllowed: p.cert?.allowed === true,
    primaryCertAllowExpiredCerts: p.cert?.allowExpiredCerts === true,
    primaryUpdbAllowed: updb.allowed === true,
    primaryUpdbMinPasswordLength: clampMinPasswordLength(updb.minPasswordLength ?? PASSWORD_MIN),
    primaryUpdbRequireSpecialChar: updb.requireSpecialChar === true,
    primaryUpdbRequireNumberChar: updb.requireNumberChar === true,
    primaryUpdbRequireMixedCase: updb.requireMixedCase === true,
    primaryUpdbMaxAttempts: clampMaxAttempts(updb.maxAttempts ?? 0),
    primaryUpdbLockoutDurationMinutes: clampLockoutMinutes(updb.lockoutDurationMinutes ?? 0),
    primaryExtJwtAllowed: p.extJwt?.allowed === true,
    primaryExtJwtAllowedSigners: signers(p.extJwt?.allowedSigners),
    secondaryRequireTotp: input.secondary?.requireTotp === true,
    secondaryRequiredExtJwtSigner: signer(input.secondary?.requireExtJwtSigner),
    tags: tags(input.tags),
  });
}

const has = <T extends object>(o: T | null | undefined, k: keyof T): boolean => !!o && Object.prototype.hasOwnProperty.call(o, k) && o[k] !== undefined;

/** PATCH: only what the body names changes (a null leaf keeps the current value, except the clearable signer). */
export function patchedAuthPolicy(current: AuthPolicyFields, input: AuthPolicyInput): AuthPolicyFields {
  const next = { ...current };
  const pick = <T>(v: T | null | undefined, keep: T): T => (v === undefined || v === null ? keep : v);
  if (has(input, 'name')) next.name = input.name === null ? current.name : requireName(input.name);
  const p = input.primary ?? {};
  if (p.cert) {
    next.primaryCertAllowed = pick(p.cert.allowed, current.primaryCertAllowed);
    next.primaryCertAllowExpiredCerts = pick(p.cert.allowExpiredCerts, current.primaryCertAllowExpiredCerts);
  }
  if (p.extJwt) {
    next.primaryExtJwtAllowed = pick(p.extJwt.allowed, current.primaryExtJwtAllowed);
    if (has(p.extJwt, 'allowedSigners')) next.primaryExtJwtAllowedSigners = signers(p.extJwt.allowedSigners);
  }
  if (p.updb) {
    const u = p.updb;
    next.primaryUpdbAllowed = pick(u.allowed, current.primaryUpdbAllowed);
    next.primaryUpdbMinPasswordLength = clampMinPasswordLength(pick(u.minPasswordLength, current.primaryUpdbMinPasswordLength));
    next.primaryUpdbRequireSpecialChar = pick(u.requireSpecialChar, current.primaryUpdbRequireSpecialChar);
    next.primaryUpdbRequireNumberChar = pick(u.requireNumberChar, current.primaryUpdbRequireNumberChar);
    next.primaryUpdbRequireMixedCase = pick(u.requireMixedCase, current.primaryUpdbRequireMixedCase);
    next.primaryUpdbMaxAttempts = clampMaxAttempts(pick(u.maxAttempts, current.primaryUpdbMaxAttempts));
    next.primaryUpdbLockoutDurationMinutes = clampLockoutMinutes(pick(u.lockoutDurationMinutes, current.primaryUpdbLockoutDurationMinutes));
  }
  const s = input.secondary;
  if (s) {
    next.secondaryRequireTotp = pick(s.requireTotp, current.secondaryRequireTotp);
    if (has(s, 'requireExtJwtSigner')) next.secondaryRequiredExtJwtSigner = signer(s.requireExtJwtSigner);
  }
  if (has(input, 'tags')) next.tags = tags(input.tags);
  return withinRange(next);
}

/** Every signer id the policy names. */
export function referencedSigners(f: AuthPolicyFields): string[] {
  return [...new Set([...f.primaryExtJwtAllowedSigners, ...(f.secondaryRequiredExtJwtSigner ? [f.secondaryRequiredExtJwtSigner] : [])])];
}

/** Whether a change alters how sessions of the policy's identities authenticate (cached principals must go). */
export function changesSessions(a: AuthPolicyFields, b: AuthPolicyFields): boolean {
  return a.secondaryRequireTotp !== b.secondaryRequireTotp || a.secondaryRequiredExtJwtSigner !== b.secondaryRequiredExtJwtSigner;
}
