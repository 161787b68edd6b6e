import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { pemCertificates } from '@ziti/x509';
import type { Peers } from '../grpc/peers.js';

/** The control listener's TLS identity and the controller CA it verifies routers against. */
export interface CtrlIdentity {
  keyPem: string;
  /** Server certificate and its chain (PEM). */
  certPem: string;
  /** The controller's roots (routers' client certificates must chain to one). */
  roots: X509Certificate[];
  /** The controller's intermediates (accepted as chain links). */
  intermediates: X509Certificate[];
  notAfter: number;
}

/** The names the listener's certificate covers: the advertised host, this host, loopback. */
export function ctrlSans(advertisedHost: string | undefined): string[] {
  const names = new Set<string>(['localhost', '127.0.0.1', '::1', hostname()]);
  if (advertisedHost) names.add(advertisedHost);
  return [...names].filter((n) => n.length > 0 && (isIP(n) !== 0 || /^[A-Za-z0-9.-]+$/.test(n)));
}

/**
 * A fresh key made here (only its public half leaves, in `IssueCtrlCertificate`) and the
 * certificate pki-enrollment issues for it, with the controller CA bundle that comes back.
 */
export async function issueCtrlIdentity(peers: Pick<Peers, 'issueCtrlCertificate'>, sans: string[]): Promise<CtrlIdentity> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const issued = await peers.issueCtrlCertificate(sans, publicKey.export({ type: 'spki', format: 'pem' }).toString());
  const bundle = pemCertificates(issued.caBundlePem).map((d) => new X509Certificate(d));
  const roots = pemCertificates(issued.rootCaPem).map((d) => new X509Certificate(d));
  const rootPrints = new Set(roots.map((r) => r.fingerprint256));
  const leaf = new X509Certificate(pemCertificates(issued.certPem)[0]);
  return {
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    certPem: issued.certPem,
    roots: roots.length > 0 ? roots : bundle.filter((c) => c.ca && c.subject === c.issuer),
    intermediates: bundle.filter((c) => c.ca && !rootPrints.has(c.fingerprint256)),
    notAfter: Date.parse(leaf.validTo),
  };
}
