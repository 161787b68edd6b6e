import { type KeyObject, generateKeyPairSync } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { certPem, issueCertificate, nameDer, spkiOf } from '@ziti/x509';
import { CONTEXT_NAMES, type ContextName, InternalCredentials, type InternalTlsMaterial, holdInternalCredentials, holdsInternalCredentials } from './internal-tls.js';

/**
 * A CA of the internal plane and the certificates it issues to contexts (EC P-256, client and
 * server use, common name = the context's name). The all-in-one controller makes one in memory at
 * every start (nothing is stored: its contexts live and die with the process); `npm run
 * internal-pki -w @ziti/service-kit` writes one to files for contexts run as separate processes
 * without cert-manager. This CA is never the controller's public PKI.
 */
export interface InternalPki {
  caPem: string;
  /** A certificate for `name`, valid for `days`, with these DNS names and IPs besides the defaults. */
  issue(name: ContextName, opts?: { days?: number; dns?: string[]; ip?: string[] }): InternalTlsMaterial;
}

const DAY_MS = 86_400_000;
const ecKey = (): KeyObject => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;

export function createInternalPki(opts: { caDays?: number; organisation?: string } = {}): InternalPki {
  const caKey = ecKey();
  const organisation = opts.organisation ?? 'Ziti Controller internal plane';
  const caName = nameDer('ziti-internal-ca', organisation);
  const now = Date.now();
  const caDer = issueCertificate({
    subjectDer: caName,
    spkiDer: spkiOf(caKey),
    selfKey: caKey,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + (opts.caDays ?? 3650) * DAY_MS),
    kind: 'root',
    pathLen: 0,
  });
  const caPem = certPem(caDer);
  const issuer = { nameDer: caName, privateKey: caKey, spkiDer: spkiOf(caKey) };
  return {
    caPem,
    issue(name, o = {}) {
      const key = ecKey();
      const issuedAt = Date.now();
      const der = issueCertificate({
        subjectDer: nameDer(name, organisation),
        spkiDer: spkiOf(key),
        issuer,
        notBefore: new Date(issuedAt - 60_000),
        notAfter: new Date(issuedAt + (o.days ?? 365) * DAY_MS),
        kind: 'client-server',
        sans: { dns: [name, 'localhost', ...(o.dns ?? [])], ip: ['127.0.0.1', '::1', ...(o.ip ?? [])] },
      });
      return { caPem, certPem: certPem(der), keyPem: key.export({ type: 'pkcs8', format: 'pem' }).toString() };
    },
  };
}

/** Credentials for every context from one fresh CA (the all-in-one controller, tests). */
export function createInternalIdentities(names: readonly ContextName[] = CONTEXT_NAMES): InternalCredentials[] {
  const pki = createInternalPki();
  return names.map((n) => new InternalCredentials(n, pki.issue(n)));
}

/**
 * Makes sure this process holds an internal identity for every context, from one CA made in
 * memory (the all-in-one controller, tests that run contexts in one process): identities already
 * held are kept, so every controller a process starts shares one internal CA.
 */
export function holdProcessIdentities(): void {
  const missing = CONTEXT_NAMES.filter((n) => !holdsInternalCredentials(n));
  if (missing.length === 0) return;
  holdInternalCredentials(...createInternalIdentities());
}

/**
 * Writes `<dir>/<context>/{ca.crt,tls.crt,tls.key}` for each context (keys 0600), the layout
 * `ZITI_INTERNAL_TLS_DIR` reads. Returns the directories by context.
 */
export function writeInternalPki(dir: string, opts: { days?: number; dns?: string[]; names?: readonly ContextName[] } = {}): Record<ContextName, string> {
  const pki = createInternalPki();
  const out = {} as Record<ContextName, string>;
  for (const name of opts.names ?? CONTEXT_NAMES) {
    const m = pki.issue(name, { days: opts.days, dns: opts.dns });
    const d = path.join(dir, name);
    mkdirSync(d, { recursive: true, mode: 0o700 });
    writeFileSync(path.join(d, 'ca.crt'), m.caPem);
    writeFileSync(path.join(d, 'tls.crt'), m.certPem);
    writeFileSync(path.join(d, 'tls.key'), m.keyPem, { mode: 0o600 });
    out[name] = d;
  }
  return out;
}
