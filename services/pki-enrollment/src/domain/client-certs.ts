import { X509Certificate } from 'node:crypto';
import { verifyChain, usableAsClientCert } from '@ziti/x509';
import { externalIdOf } from '../crypto/claims.js';
import { certPem, fingerprint, pemCertificates } from '@ziti/x509';
import type { Ca } from './model.js';
import type { ControllerPki } from './pki.js';
import type { CaRepository } from './ports.js';

/** The outcome of checking a presented client certificate chain (see VerifyClientCertificate). */
export interface ClientCertVerdict {
  verified: boolean;
  improperClientCertChain: boolean;
  fingerprint: string;
  leafPem: string;
  ca?: Ca;
  externalId: string;
  missingExternalIdClaim: boolean;
  isExpired: boolean;
}

/** Parses a presented chain (leaf first, DER); certificates that do not parse are dropped. */
export function parseChain(chainDer: readonly Buffer[]): X509Certificate[] {
  const out: X509Certificate[] = [];
  for (const der of chainDer) {
    try {
      out.push(new X509Certificate(der));
    } catch {
      // an unparsable certificate can not help a chain
    }
  }
  return out;
}

/** The certificates of a CA's PEM: the CA itself first, then any chain it came with. */
export function caCertificates(ca: Ca): X509Certificate[] {
  return pemCertificates(ca.certPem).map((d) => new X509Certificate(d));
}

/** Verifies `leaf` (with `intermediates`) against one third-party CA. */
export function verifiedByCa(leaf: X509Certificate, intermediates: X509Certificate[], ca: Ca): { ok: boolean; expired: boolean } {
  const [anchor, ...rest] = caCertificates(ca);
  if (!anchor) return { ok: false, expired: false };
  return verifyChain(leaf, [...intermediates, ...rest], [anchor]);
}

/**
 * Checks a client certificate chain as `POST /authenticate?method=cert` needs it: against the
 * first-party root, then root + intermediate (a chain that stops at the intermediate is accepted
 * but flagged `improperClientCertChain`), then every verified, auth-enabled third-party CA (whose
 * externalIdClaim, if any, is read from the leaf).
 */
export async function verifyClientChain(pki: ControllerPki, cas: CaRepository, chainDer: readonly Buffer[]): Promise<ClientCertVerdict> {
  const certs = parseChain(chainDer);
  const leaf = certs[0];
  const none: ClientCertVerdict = { verified: false, improperClientCertChain: false, fingerprint: '', leafPem: '', externalId: '', missingExternalIdClaim: false, isExpired: false };
  if (!leaf) return none;
  const base = { ...none, fingerprint: fingerprint(leaf.raw), leafPem: certPem(leaf.raw) };
  if (!usableAsClientCert(leaf)) return base;
  const presented = certs.slice(1);

  const proper = verifyChain(leaf, presented, [pki.root.cert]);
  if (proper.ok) return { ...base, verified: true, isExpired: proper.expired };
  const improper = verifyChain(leaf, presented, [pki.root.cert, pki.intermediate.cert]);
  if (improper.ok) return { ...base, verified: true, improperClientCertChain: true, isExpired: improper.expired };

  for (const ca of await cas.listVerified()) {
    if (!ca.isAuthEnabled) continue;
    const r = verifiedByCa(leaf, presented, ca);
    if (!r.ok) continue;
    const externalId = ca.externalIdClaim ? externalIdOf(leaf, ca.externalIdClaim) : undefined;
    return {
      ...base,
      verified: true,
      ca,
      isExpired: r.expired,
      externalId: externalId ?? '',
      missingExternalIdClaim: !!ca.externalIdClaim && externalId === undefined,
    };
  }
  return base;
}
