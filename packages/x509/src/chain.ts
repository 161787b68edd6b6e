import { X509Certificate } from 'node:crypto';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EKU = '2.5.29.37.0';
const MAX_DEPTH = 8;

/** The outcome of a chain check. */
export interface ChainResult {
  ok: boolean;
  /** The anchor the chain ended at (when ok). */
  anchor?: X509Certificate;
  /** Some certificate of the path (leaf included) is outside its validity window. */
  expired: boolean;
}

function issuedBy(child: X509Certificate, parent: X509Certificate): boolean {
  try {
    return child.checkIssued(parent) && child.verify(parent.publicKey);
  } catch {
    return false;
  }
}

function outsideValidity(cert: X509Certificate, now: number): boolean {
  return Date.parse(cert.validFrom) > now || Date.parse(cert.validTo) < now;
}

/** A leaf may authenticate a client: not a CA, and its extended key usage (if any) allows clientAuth. */
export function usableAsClientCert(leaf: X509Certificate): boolean {
  if (leaf.ca) return false;
  const eku = leaf.keyUsage;
  return !eku || eku.length === 0 || eku.includes(CLIENT_AUTH) || eku.includes(ANY_EKU);
}

/**
 * Verifies `leaf` up to one of `anchors`, through CA certificates taken from `intermediates`
 * (what the client presented, plus any the caller adds). Signatures and issuer names are
 * checked at every step; validity windows are not enforced but reported in `expired` (the
 * auth policy decides about expired certificates).
 */
export function verifyChain(
  leaf: X509Certificate,
  intermediates: readonly X509Certificate[],
  anchors: readonly X509Certificate[],
  now = Date.now(),
): ChainResult {
  const path: X509Certificate[] = [leaf];
  let current = leaf;
  const used = new Set<X509Certificate>();
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const anchor = anchors.find((a) => a.ca && issuedBy(current, a));
    if (anchor) return { ok: true, anchor, expired: [...path, anchor].some((c) => outsideValidity(c, now)) };
    const next = intermediates.find((i) => !used.has(i) && i.ca && i.fingerprint256 !== current.fingerprint256 && issuedBy(current, i));
    if (!next) break;
    used.add(next);
    path.push(next);
    current = next;
  }
  return { ok: false, expired: false };
}
