import { type KeyObject, X509Certificate, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { issueCertificate } from './x509.js';

/** The controller's TLS trust material, as PEM. */
export interface ControllerPki {
  caCertPem: string;
  serverCertPem: string;
  serverKeyPem: string;
  /** Where the files live (`<dataDir>/pki`). */
  dir: string;
}

export interface PkiOptions {
  /** Directory of the PKI files, created when missing. */
  dir: string;
  /** Names and addresses the server certificate must cover besides localhost, 127.0.0.1 and ::1. */
  sans?: readonly string[];
  log?: (m: string) => void;
}

export const PKI_FILES = {
  caCert: 'ca.cert.pem',
  caKey: 'ca.key.pem',
  serverCert: 'server.cert.pem',
  serverKey: 'server.key.pem',
} as const;

const CA_COMMON_NAME = 'Ziti Controller Root CA';
const DAY_MS = 24 * 3600 * 1000;
const CA_VALIDITY_DAYS = 3650;
const SERVER_VALIDITY_DAYS = 365;
/** A server certificate closer than this to its expiry is reissued at start. */
const RENEW_BEFORE_DAYS = 30;
const CLOCK_SKEW_MS = 3600 * 1000;

function newKeyPair(): { privateKey: KeyObject; publicKey: KeyObject } {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' });
}

function keyPem(key: KeyObject): string {
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/** Writes a file atomically with the given mode (keys 0600, certificates 0644). */
function writeFile(path: string, content: string, mode: number): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, content, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}

/** Canonical text of a SAN entry, so `::1` and `0:0:0:0:0:0:0:1` compare equal. */
export function canonicalSan(san: string): string {
  const v = san.trim().toLowerCase();
  if (isIP(v) === 6) return new URL(`http://[${v}]/`).hostname.slice(1, -1);
  return v;
}

/** The SANs of a certificate, canonical. */
export function certificateSans(cert: X509Certificate): Set<string> {
  const out = new Set<string>();
  for (const part of (cert.subjectAltName ?? '').split(/,\s*/)) {
    const m = /^(DNS|IP Address):(.+)$/.exec(part.trim());
    if (m) out.add(canonicalSan(m[2]!));
  }
  return out;
}

/** The SANs the server certificate must carry: the loopback names plus the configured ones. */
export function requiredSans(extra: readonly string[] = []): string[] {
  const all = ['localhost', '127.0.0.1', '::1', ...extra].map((s) => s.trim()).filter((s) => s.length > 0 && s !== '0.0.0.0' && s !== '::');
  return [...new Set(all.map(canonicalSan))];
}

function loadCa(dir: string, log: (m: string) => void): { cert: X509Certificate; certPem: string; privateKey: KeyObject } {
  const certPath = join(dir, PKI_FILES.caCert);
  const keyPath = join(dir, PKI_FILES.caKey);
  if (existsSync(certPath) && existsSync(keyPath)) {
    const certPem = readFileSync(certPath, 'utf8');
    const cert = new X509Certificate(certPem);
    const privateKey = createPrivateKey(readFileSync(keyPath, 'utf8'));
    if (!cert.checkPrivateKey(privateKey)) throw new Error(`${keyPath} does not match ${certPath}`);
    return { cert, certPem, privateKey };
  }
  const { privateKey, publicKey } = newKeyPair();
  const now = Date.now();
  const certPem = issueCertificate({
    commonName: CA_COMMON_NAME,
    publicKey,
    selfPrivateKey: privateKey,
    notBefore: new Date(now - CLOCK_SKEW_MS),
    notAfter: new Date(now + CA_VALIDITY_DAYS * DAY_MS),
    isCa: true,
  });
  writeFile(keyPath, keyPem(privateKey), 0o600);
  writeFile(certPath, certPem, 0o644);
  log(`pki: generated a root CA in ${certPath}`);
  return { cert: new X509Certificate(certPem), certPem, privateKey };
}

function serverCertUsable(ca: X509Certificate, certPem: string, keyPem: string, sans: readonly string[]): boolean {
  try {
    const cert = new X509Certificate(certPem);
    if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return false;
    if (!cert.checkPrivateKey(createPrivateKey(keyPem))) return false;
    if (Date.parse(cert.validTo) - Date.now() < RENEW_BEFORE_DAYS * DAY_MS) return false;
    const have = certificateSans(cert);
    return sans.every((s) => have.has(s));
  } catch {
    return false;
  }
}

/**
 * Loads the controller PKI from `dir`, generating what is missing: a self-signed root CA (EC
 * P-256, 10 years) on first start, and a server certificate signed by it (EC P-256, 1 year) for
 * localhost, 127.0.0.1, ::1 and the given names. A server certificate that no longer covers the
 * names, does not chain to the CA or expires within 30 days is reissued; the CA is kept.
 * Keys are PKCS#8 PEM files with mode 0600.
 */
export function loadOrCreatePki(opts: PkiOptions): ControllerPki {
  const log = opts.log ?? (() => undefined);
  mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
  const ca = loadCa(opts.dir, log);
  const sans = requiredSans(opts.sans);

  const certPath = join(opts.dir, PKI_FILES.serverCert);
  const keyPath = join(opts.dir, PKI_FILES.serverKey);
  if (existsSync(certPath) && existsSync(keyPath)) {
    const serverCertPem = readFileSync(certPath, 'utf8');
    const serverKeyPem = readFileSync(keyPath, 'utf8');
    if (serverCertUsable(ca.cert, serverCertPem, serverKeyPem, sans)) {
      return { caCertPem: ca.certPem, serverCertPem, serverKeyPem, dir: opts.dir };
    }
  }

  const { privateKey, publicKey } = newKeyPair();
  const now = Date.now();
  const serverCertPem = issueCertificate({
    commonName: sans.find((s) => s !== 'localhost' && !isIP(s)) ?? 'localhost',
    publicKey,
    issuer: { commonName: CA_COMMON_NAME, privateKey: ca.privateKey, publicKey: createPublicKey(ca.privateKey) },
    notBefore: new Date(now - CLOCK_SKEW_MS),
    notAfter: new Date(now + SERVER_VALIDITY_DAYS * DAY_MS),
    isCa: false,
    sans,
  });
  const serverKeyPem = keyPem(privateKey);
  writeFile(keyPath, serverKeyPem, 0o600);
  writeFile(certPath, serverCertPem, 0o644);
  log(`pki: issued a server certificate for ${sans.join(', ')} in ${certPath}`);
  return { caCertPem: ca.certPem, serverCertPem, serverKeyPem, dir: opts.dir };
}
