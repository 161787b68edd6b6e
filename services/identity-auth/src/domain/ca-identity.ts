import { X509Certificate } from 'node:crypto';
import { normalizeName } from '@ziti/http-kit';

/** The name format of a CA whose auto-enrolled identities have none configured (§6.7). */
export const DEFAULT_CA_IDENTITY_NAME_FORMAT = '[caName]-[commonName]';

/** An identity auto-enrolled by a third-party CA: `CreateIdentityFromCa` and certificate login. */
export interface CaIdentityRequest {
  /** The CA's name format with every symbol replaced but `[identityId]` (replaced here). */
  name: string;
  roleAttributes: string[];
  caId: string;
  certPem: string;
  fingerprint: string;
  /** Non-empty: the identity authenticates by this claim and gets no cert authenticator. */
  externalId: string;
  /** Empty: the default auth policy. */
  authPolicyId: string;
}

/**
 * Replaces the symbols of a CA identity name format that the certificate and the CA give:
 * `[caName]`, `[caId]`, `[commonName]`, `[requestedName]` (none at login: `[identityId]` then).
 * `[identityId]` is left for the identity's creation, which assigns the id.
 */
export function formatCaIdentityName(format: string, v: { caName: string; caId: string; commonName: string; requestedName?: string }): string {
  return (format || DEFAULT_CA_IDENTITY_NAME_FORMAT)
    .replaceAll('[caName]', v.caName)
    .replaceAll('[caId]', v.caId)
    .replaceAll('[commonName]', v.commonName)
    .replaceAll('[requestedName]', v.requestedName || '[identityId]');
}

/** The name with the assigned id, in its stored form (`normalizeName`); an empty result falls back to the id itself. */
export function withIdentityId(name: string, identityId: string): string {
  return normalizeName(name.replaceAll('[identityId]', identityId)) || identityId;
}

/** The n-th alternative of a name that is taken: a six-digit counter appended (`name000001`). */
export function numberedName(base: string, n: number): string {
  return `${base}${String(n).padStart(6, '0')}`;
}

/** The common name of a PEM certificate's subject ('' when it has none or does not parse). */
export function commonNameOf(certPem: string): string {
  try {
    const subject = new X509Certificate(certPem).subject;
    const cn = subject.split('\n').find((part) => part.startsWith('CN='));
    return cn ? cn.slice(3) : '';
  } catch {
    return '';
  }
}
