import { type KeyObject, X509Certificate, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { isIP } from 'node:net';
import type { Csr, Sans } from '../crypto/csr.js';
import { type JwtSigner, jwtSigner } from '../crypto/jwt.js';
import type { KeyVault } from '../crypto/secrets.js';
import { type CertificateKind, type Issuer, certPem, certSubjectDer, fingerprint, issueCertificate, nameDer, spkiOf } from '@ziti/x509';
import type { Transaction, UnitOfWork } from './ports.js';

const DAY_MS = 24 * 3600_000;
const CLOCK_SKEW_MS = 3600_000;
const CA_VALIDITY_DAYS = 3650;
const SERVER_VALIDITY_DAYS = 365;
const SERVER_RENEW_BEFORE_DAYS = 30;
const SERVER_REREAD_MS = 30_000;
/** Identity and router certificates: one year, as the controller's default signing options. */
export const ISSUED_VALIDITY_DAYS = 365;

interface Loaded {
  cert: X509Certificate;
  certPem: string;
  key: KeyObject;
  issuer: Issuer;
}

export interface ServerCredentials {
  /** The server certificate followed by the intermediate that issued it. */
  certChainPem: string;
  signer: JwtSigner;
}

export interface IssuedCertificate {
  der: Buffer;
  pem: string;
  /** Leaf + intermediate (the chain minus the root), as enrollment responses return it. */
  chainPem: string;
  fingerprint: string;
  notAfter: Date;
}

const keyPemOf = (key: KeyObject) => key.export({ type: 'pkcs8', format: 'pem' }).toString();
const newKey = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });

/** The canonical text of a SAN (so `::1` and `0:0::1` compare equal). */
export function canonicalSan(san: string): string {
  const v = san.trim().toLowerCase();
  return isIP(v) === 6 ? new URL(`http://[${v}]/`).hostname.slice(1, -1) : v;
}

function splitSans(sans: readonly string[]): Partial<Sans> {
  return { dns: sans.filter((s) => !isIP(s)), ip: sans.filter((s) => isIP(s)) };
}

/**
 * The controller's own PKI: a root CA, an intermediate that signs identity, router and server
 * certificates, and the edge API server certificate (whose key also signs enrollment JWTs).
 * Created on first start under an advisory lock (safe with several replicas), persisted with
 * sealed private keys, loaded by every replica.
 */
export class ControllerPki {
  private server?: ServerCredentials;
  private serverLoadedAt = 0;

  private constructor(
    private readonly uow: UnitOfWork,
    private readonly vault: KeyVault,
    readonly root: Loaded,
    readonly intermediate: Loaded,
    readonly trustDomain: string,
    private readonly log: (m: string) => void,
    private readonly serverKey: KeyObject,
  ) {}

  /** Loads the PKI, generating the root and intermediate on the very first start. */
  static async open(uow: UnitOfWork, vault: KeyVault, opts: { serverKey: KeyObject; trustDomain?: string; log?: (m: string) => void }): Promise<ControllerPki> {
    const log = opts.log ?? (() => undefined);
    const rows = await uow.run(async (tx) => {
      await tx.lock('controller-pki');
      let root = await tx.pki.find('root');
      let intermediate = await tx.pki.find('intermediate');
      if (!root || !intermediate) {
        const td = opts.trustDomain ?? `ziti-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
        const now = Date.now();
        const rootKey = newKey();
        const rootName = nameDer('Ziti Controller Root CA');
        const rootDer = issueCertificate({
          subjectDer: rootName, spkiDer: spkiOf(rootKey.publicKey), selfKey: rootKey.privateKey, kind: 'root',
          notBefore: new Date(now - CLOCK_SKEW_MS), notAfter: new Date(now + CA_VALIDITY_DAYS * DAY_MS), sans: { uri: [`spiffe://${td}`] },
        });
        const intKey = newKey();
        const intDer = issueCertificate({
          subjectDer: nameDer('Ziti Controller Intermediate CA'), spkiDer: spkiOf(intKey.publicKey), kind: 'intermediate', pathLen: 0,
          issuer: { nameDer: rootName, privateKey: rootKey.privateKey, spkiDer: spkiOf(rootKey.publicKey) },
          notBefore: new Date(now - CLOCK_SKEW_MS), notAfter: new Date(now + CA_VALIDITY_DAYS * DAY_MS), sans: { uri: [`spiffe://${td}`] },
        });
        root = { certPem: certPem(rootDer), keySealed: vault.seal('root', keyPemOf(rootKey.privateKey)), sans: [] };
        intermediate = { certPem: certPem(intDer), keySealed: vault.seal('intermediate', keyPemOf(intKey.privateKey)), sans: [] };
        await tx.pki.save('root', root);
        await tx.pki.save('intermediate', intermediate);
        log(`pki-enrollment: generated the controller root and intermediate CAs (trust domain ${td})`);
      }
      return { root, intermediate };
    });
    const load = (name: string, row: { certPem: string; keySealed: string }): Loaded => {
      const cert = new X509Certificate(row.certPem);
      const key = createPrivateKey(vault.open(name, row.keySealed));
      if (!cert.checkPrivateKey(key)) throw new Error(`pki-enrollment: the stored ${name} key does not match its certificate`);
      return { cert, certPem: row.certPem, key, issuer: { nameDer: certSubjectDer(cert.raw), privateKey: key, spkiDer: spkiOf(cert.publicKey) } };
    };
    const root = load('root', rows.root);
    const intermediate = load('intermediate', rows.intermediate);
    const td = opts.trustDomain ?? /URI:spiffe:\/\/([^,\s/]+)/.exec(root.cert.subjectAltName ?? '')?.[1] ?? `ziti-${root.cert.fingerprint256.replace(/:/g, '').slice(0, 16).toLowerCase()}`;
    return new ControllerPki(uow, vault, root, intermediate, td, log, opts.serverKey);
  }

  /** The first-party CA certificates (root, then intermediate), DER. */
  caCertsDer(): Buffer[] {
    return [this.root.cert.raw, this.intermediate.cert.raw];
  }

  caBundlePem(): string {
    return this.root.certPem + this.intermediate.certPem;
  }

  /**
   * The edge API's server credentials covering `sans` (plus the loopback names). The stored
   * certificate is reused while it covers them, chains to the intermediate and is not about to
   * expire; otherwise one is issued (under the lock) for the union of the stored and requested
   * names, so replicas asking for different names converge on one certificate.
   */
  async serverCredentials(requested: readonly string[]): Promise<ServerCredentials> {
    const sans = [...new Set(['localhost', '127.0.0.1', '::1', ...requested].map(canonicalSan).filter((s) => s && s !== '0.0.0.0' && s !== '::'))];
    const current = this.server ?? (await this.loadServer(this.uow.repos));
    if (current && this.covers(current, sans)) {
      if (!this.server) this.serverLoadedAt = Date.now();
      return (this.server = current);
    }
    const creds = await this.uow.run(async (tx) => {
      await tx.lock('controller-pki');
      const stored = await this.loadServer(tx);
      if (stored && this.covers(stored, sans)) return stored;
      const union = [...new Set([...(stored ? new X509Certificate(stored.certChainPem).subjectAltName ?? '' : '')
        .split(/,\s*/)
        .map((p) => /^(?:DNS|IP Address):(.+)$/.exec(p.trim())?.[1])
        .filter((s): s is string => !!s)
        .map(canonicalSan), ...sans])];
      const now = Date.now();
      const der = issueCertificate({
        commonName: union.find((s) => s !== 'localhost' && !isIP(s)) ?? 'localhost', spkiDer: spkiOf(this.serverKey), issuer: this.intermediate.issuer,
        kind: 'client-server', notBefore: new Date(now - CLOCK_SKEW_MS), notAfter: new Date(now + SERVER_VALIDITY_DAYS * DAY_MS), sans: splitSans(union),
      });
      // The key is derived from the server key secret, never stored: the row keeps an empty sealed value.
      await tx.pki.save('server', { certPem: certPem(der), keySealed: this.vault.seal('server', ''), sans: union });
      this.log(`pki-enrollment: issued the edge API server certificate for ${union.join(', ')}`);
      return this.serverFrom(certPem(der));
    });
    this.server = creds;
    this.serverLoadedAt = Date.now();
    return creds;
  }

  /**
   * The current server credentials (the JWT signer). Re-read every 30 s, so a certificate that
   * another replica reissued (new names, renewal) signs here too soon after.
   */
  async currentServer(): Promise<ServerCredentials> {
    if (this.server && Date.now() - this.serverLoadedAt < SERVER_REREAD_MS) return this.server;
    const loaded = await this.loadServer(this.uow.repos);
    if (!loaded) return this.serverCredentials([]);
    if (!this.server || this.server.certChainPem !== loaded.certChainPem) this.server = loaded;
    this.serverLoadedAt = Date.now();
    return this.server;
  }

  private async loadServer(repos: Pick<Transaction, 'pki'>): Promise<ServerCredentials | undefined> {
    const row = await repos.pki.find('server');
    return row ? this.serverFrom(row.certPem) : undefined;
  }

  private serverFrom(leafPem: string): ServerCredentials {
    return { certChainPem: leafPem + this.intermediate.certPem, signer: jwtSigner(keyPemOf(this.serverKey), leafPem) };
  }

  /** Whether `publicKeyPem` is the edge server key's public key (the gateway derived the same one). */
  isServerKey(publicKeyPem: string): boolean {
    try {
      return createPublicKey(publicKeyPem).export({ type: 'spki', format: 'der' }).equals(spkiOf(this.serverKey));
    } catch {
      return false;
    }
  }

  private covers(creds: ServerCredentials, sans: readonly string[]): boolean {
    const cert = creds.signer.cert;
    // A certificate of another key (a changed server key secret, or one from before keys were derived) is replaced.
    if (!cert.publicKey.export({ type: 'spki', format: 'der' }).equals(spkiOf(this.serverKey))) return false;
    if (!cert.checkIssued(this.intermediate.cert) || !cert.verify(this.intermediate.cert.publicKey)) return false;
    if (Date.parse(cert.validTo) - Date.now() < SERVER_RENEW_BEFORE_DAYS * DAY_MS) return false;
    const have = new Set(
      (cert.subjectAltName ?? '').split(/,\s*/).map((p) => /^(?:DNS|IP Address):(.+)$/.exec(p.trim())?.[1]).filter((s): s is string => !!s).map(canonicalSan),
    );
    return sans.every((s) => have.has(s));
  }

  /**
   * A server certificate (serverAuth) for the router control listener's key, covering `sans`,
   * signed by the intermediate like the edge API's: the leaf followed by the intermediate.
   * Nothing is stored; the caller renews it.
   */
  issueCtrl(publicKey: KeyObject, sans: readonly string[]): { certChainPem: string; notAfter: Date } {
    const now = Date.now();
    const notAfter = new Date(Math.floor((now + SERVER_VALIDITY_DAYS * DAY_MS) / 1000) * 1000);
    const der = issueCertificate({
      commonName: sans.find((s) => !isIP(s)) ?? sans[0] ?? 'ziti-ctrl', spkiDer: spkiOf(publicKey), issuer: this.intermediate.issuer,
      kind: 'server', notBefore: new Date(now - CLOCK_SKEW_MS), notAfter, sans: splitSans(sans),
    });
    return { certChainPem: certPem(der) + this.intermediate.certPem, notAfter };
  }

  /** The SPIFFE id of an identity (and of one of its API sessions). */
  spiffeId(identityId: string, apiSessionId?: string): string {
    return `spiffe://${this.trustDomain}/identity/${identityId}${apiSessionId ? `/apiSession/${apiSessionId}` : ''}`;
  }

  /**
   * Signs a CSR with the intermediate. The subject is the CSR's (or `CN=<fallbackCn>` when it
   * has none); the SANs are the given ones, never the CSR's unless the caller passes them on.
   */
  issue(csr: Csr, o: { kind: CertificateKind; sans: Partial<Sans>; fallbackCn: string; validityMs?: number }): IssuedCertificate {
    const now = Date.now();
    // X.509 times have whole seconds: the reported expiry is the certificate's.
    const notAfter = new Date(Math.floor((now + (o.validityMs ?? ISSUED_VALIDITY_DAYS * DAY_MS)) / 1000) * 1000);
    const subjectDer = csr.commonName || csr.subjectDer.length > 2 ? csr.subjectDer : nameDer(o.fallbackCn);
    const der = issueCertificate({
      subjectDer, spkiDer: csr.spkiDer, issuer: this.intermediate.issuer, kind: o.kind,
      notBefore: new Date(now - 60_000), notAfter, sans: o.sans,
    });
    const pem = certPem(der);
    return { der, pem, chainPem: pem + this.intermediate.certPem, fingerprint: fingerprint(der), notAfter };
  }
}
