import { X509Certificate, createHash, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { PeerCertificate } from 'node:tls';
import type { experimental } from '@grpc/grpc-js';

/**
 * The internal plane's identities. Every context (and the gateway) proves who it is to the others
 * with a certificate of the internal CA whose common name is its context name; nothing behind the
 * gateway trusts a caller for where it stands. The all-in-one controller makes its own CA at start
 * (`createInternalPki`); separate processes read theirs from `ZITI_INTERNAL_TLS_DIR` (`ca.crt`,
 * `tls.crt`, `tls.key`: the layout of a cert-manager Certificate's Secret), re-read when the files
 * change, so a renewal needs no restart.
 */

export const CONTEXT_NAMES = ['gateway', 'identity-auth', 'pki-enrollment', 'policy', 'session', 'posture', 'fabric'] as const;
export type ContextName = (typeof CONTEXT_NAMES)[number];

export function isContextName(value: unknown): value is ContextName {
  return typeof value === 'string' && (CONTEXT_NAMES as readonly string[]).includes(value);
}

/** PEM text of one context's certificate (leaf first, then any intermediates), its key and the CA it trusts. */
export interface InternalTlsMaterial {
  caPem: string;
  certPem: string;
  keyPem: string;
}

type CertificateProvider = experimental.CertificateProvider;
type CaListener = Parameters<CertificateProvider['addCaCertificateListener']>[0];
type IdentityListener = Parameters<CertificateProvider['addIdentityCertificateListener']>[0];

export class InternalTlsError extends Error {}

/** The common name of a certificate's subject, as Node parses it. */
function commonNameOf(subject: string | Record<string, unknown> | undefined): string | undefined {
  if (!subject) return undefined;
  if (typeof subject === 'string') {
    const line = subject.split('\n').find((l) => l.startsWith('CN='));
    return line?.slice(3);
  }
  const cn = subject.CN;
  return typeof cn === 'string' ? cn : undefined;
}

/**
 * Checks that a material is usable as `name`'s identity: the leaf names that context, its key is
 * the leaf's, and the leaf was issued by the CA it comes with. Returns the material.
 */
export function checkInternalMaterial(material: InternalTlsMaterial, name?: ContextName, where = 'internal TLS material'): { material: InternalTlsMaterial; name: ContextName } {
  let leaf: X509Certificate;
  let ca: X509Certificate;
  try {
    leaf = new X509Certificate(material.certPem);
    ca = new X509Certificate(material.caPem);
  } catch {
    throw new InternalTlsError(`${where}: the certificate or CA is not a PEM certificate`);
  }
  const cn = commonNameOf(leaf.subject);
  if (!isContextName(cn)) throw new InternalTlsError(`${where}: the certificate's common name "${cn ?? ''}" is not a context name (${CONTEXT_NAMES.join(', ')})`);
  if (name && cn !== name) throw new InternalTlsError(`${where}: the certificate names "${cn}", expected "${name}"`);
  let keyMatches = false;
  try {
    keyMatches = leaf.checkPrivateKey(createPrivateKey(material.keyPem));
  } catch {
    throw new InternalTlsError(`${where}: the private key is not a PEM private key`);
  }
  if (!keyMatches) throw new InternalTlsError(`${where}: the private key is not the certificate's`);
  const chain = pemBlocksOf(material.certPem).map((pem) => new X509Certificate(pem));
  const top = chain[chain.length - 1]!;
  if (!top.checkIssued(ca) || !top.verify(ca.publicKey)) throw new InternalTlsError(`${where}: the certificate was not issued by the CA given with it`);
  return { material, name: cn };
}

function pemBlocksOf(text: string): string[] {
  return text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

/**
 * One context's internal credentials. They serve as grpc-js certificate providers (servers and
 * channels follow a rotation at once) and give TLS options for the HTTPS listener and agents.
 */
export class InternalCredentials implements CertificateProvider {
  private caListeners = new Set<CaListener>();
  private identityListeners = new Set<IdentityListener>();
  private updateListeners = new Set<() => void>();

  constructor(
    readonly name: ContextName,
    private material: InternalTlsMaterial,
  ) {}

  current(): InternalTlsMaterial {
    return this.material;
  }

  /** Hex SHA-256 of the current certificate and key, to tell a changed material from the same one. */
  fingerprint(): string {
    return createHash('sha256').update(this.material.caPem).update(this.material.certPem).update(this.material.keyPem).digest('hex');
  }

  /** Replaces the material (after checking it names the same context) and tells every user. */
  update(material: InternalTlsMaterial): void {
    checkInternalMaterial(material, this.name);
    this.material = material;
    for (const l of this.caListeners) l({ caCertificate: Buffer.from(material.caPem) });
    for (const l of this.identityListeners) l({ certificate: Buffer.from(material.certPem), privateKey: Buffer.from(material.keyPem) });
    for (const l of this.updateListeners) l();
  }

  /** Called after every `update` (HTTPS servers renew their secure context). Returns the removal. */
  onUpdate(listener: () => void): () => void {
    this.updateListeners.add(listener);
    return () => this.updateListeners.delete(listener);
  }

  /** TLS options of a listener or agent with this identity, trusting only the internal CA. */
  tlsOptions(): { ca: string; cert: string; key: string } {
    return { ca: this.material.caPem, cert: this.material.certPem, key: this.material.keyPem };
  }

  // grpc-js registers its watcher only after adding the listener: the current material is given
  // on the next turn, as a provider that reads files would.
  addCaCertificateListener(listener: CaListener): void {
    this.caListeners.add(listener);
    setImmediate(() => this.caListeners.has(listener) && listener({ caCertificate: Buffer.from(this.material.caPem) }));
  }

  removeCaCertificateListener(listener: CaListener): void {
    this.caListeners.delete(listener);
  }

  addIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.add(listener);
    setImmediate(() => this.identityListeners.has(listener) && listener({ certificate: Buffer.from(this.material.certPem), privateKey: Buffer.from(this.material.keyPem) }));
  }

  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.delete(listener);
  }
}

/** Reads `ca.crt`, `tls.crt` and `tls.key` of a directory. */
export function readInternalTlsDir(dir: string): InternalTlsMaterial {
  const read = (file: string) => {
    try {
      return readFileSync(path.join(dir, file), 'utf8');
    } catch (err) {
      throw new InternalTlsError(`ZITI_INTERNAL_TLS_DIR: cannot read ${path.join(dir, file)}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
  };
  return { caPem: read('ca.crt'), certPem: read('tls.crt'), keyPem: read('tls.key') };
}

/**
 * The credentials in `dir` (which must name `expected` when given), re-read every `reloadMs`: a
 * changed, valid material replaces the old one; a broken one (a renewal written half-way) is
 * ignored until the next read, with one log line.
 */
export function watchInternalTlsDir(
  dir: string,
  expected: ContextName | undefined,
  log: (m: string) => void,
  reloadMs = 30_000,
): { credentials: InternalCredentials; stop(): void } {
  const first = checkInternalMaterial(readInternalTlsDir(dir), expected, `ZITI_INTERNAL_TLS_DIR ${dir}`);
  const credentials = new InternalCredentials(first.name, first.material);
  let lastProblem = '';
  const timer = setInterval(() => {
    try {
      const next = readInternalTlsDir(dir);
      const probe = new InternalCredentials(credentials.name, next);
      if (probe.fingerprint() === credentials.fingerprint()) return;
      credentials.update(next);
      lastProblem = '';
      log(`internal TLS: ${credentials.name}'s certificate was renewed from ${dir}`);
    } catch (err) {
      const problem = err instanceof Error ? err.message : String(err);
      if (problem !== lastProblem) log(`internal TLS: keeping the current certificate: ${problem}`);
      lastProblem = problem;
    }
  }, reloadMs);
  timer.unref();
  return { credentials, stop: () => clearInterval(timer) };
}

// The identities this process holds: one in a context's own process, every context's in the
// all-in-one controller. Set by the composition root before any listener or client starts.
const held = new Map<ContextName, InternalCredentials>();

/** Makes these credentials the identities of this process (replacing any of the same name). */
export function holdInternalCredentials(...credentials: InternalCredentials[]): () => void {
  for (const c of credentials) held.set(c.name, c);
  return () => {
    for (const c of credentials) if (held.get(c.name) === c) held.delete(c.name);
  };
}

/** Whether this process holds `name`'s internal identity. */
export function holdsInternalCredentials(name: ContextName): boolean {
  return held.has(name);
}

/** The credentials of `name` held by this process; a start without them fails naming the setting. */
export function internalCredentials(name: string): InternalCredentials {
  const c = isContextName(name) ? held.get(name) : undefined;
  if (!c) throw new InternalTlsError(`no internal TLS identity for "${name}" in this process (set ZITI_INTERNAL_TLS_DIR to its certificate's directory)`);
  return c;
}

/** The context a verified peer certificate names (its common name), or undefined. */
export function peerContext(cert: Pick<PeerCertificate, 'subject'> | undefined | null): ContextName | undefined {
  if (!cert || !cert.subject) return undefined;
  const cn = commonNameOf(cert.subject as unknown as Record<string, unknown>);
  return isContextName(cn) ? cn : undefined;
}

/**
 * `checkServerIdentity` for a client of `expected`: the server's certificate (already verified
 * against the internal CA) must name that context, whatever host name or address was dialled.
 */
export function expectServer(expected: ContextName): (host: string, cert: PeerCertificate) => Error | undefined {
  return (_host, cert) => (peerContext(cert) === expected ? undefined : new Error(`internal TLS: the server at this address is not ${expected}`));
}
