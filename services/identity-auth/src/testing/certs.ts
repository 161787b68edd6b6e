// Test helpers (not compiled into dist): self-signed certificates and JWTs for ext-jwt signers and
// cert authenticators. node-forge (the repository's X.509 library) builds the certificates.
import { type KeyObject, X509Certificate, createHash, createPrivateKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

export interface TestCert {
  certPem: string;
  keyPem: string;
  privateKey: KeyObject;
  /** Lower-case hex SHA-1 of the DER. */
  fingerprint: string;
}

/** A self-signed RSA certificate (RS256 signer / client certificate) valid for a day. */
export function selfSignedCert(commonName: string): TestCert {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  cert.serialNumber = `01${randomBytes(8).toString('hex')}`;
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  const attrs = [{ name: 'commonName', value: commonName }];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.sign(forge.pki.privateKeyFromPem(keyPem), forge.md.sha256.create());
  const certPem = forge.pki.certificateToPem(cert);
  const fingerprint = createHash('sha1').update(new X509Certificate(certPem).raw).digest('hex');
  return { certPem, keyPem, privateKey: createPrivateKey(keyPem), fingerprint };
}

/** Signs a JWT with `jose` (RS256 for RSA keys, ES256 for EC keys). */
export async function signJwt(key: KeyObject, claims: Record<string, unknown>, header: Record<string, unknown> = {}): Promise<string> {
  const jose = await import('jose');
  const alg = key.asymmetricKeyType === 'ec' ? 'ES256' : 'RS256';
  return new jose.SignJWT(claims).setProtectedHeader({ alg, ...header }).sign(key);
}
