import { type KeyObject, X509Certificate, createHash, createPrivateKey, sign } from 'node:crypto';

/** jose ships only ES modules: loaded once, lazily (a CommonJS build can not `require` it statically). */
let jose: Promise<typeof import('jose', { with: { 'resolution-mode': 'import' } })> | undefined;
const loadJose = () => (jose ??= import('jose'));

/** A key that signs JWTs, with the certificate that carries its public half. */
export interface JwtSigner {
  privateKey: KeyObject;
  cert: X509Certificate;
  /** ES256 / ES384 / ES512 / RS256, from the key. */
  alg: string;
  /** Hex SHA-1 of the certificate DER (the controller's `kid`). */
  kid: string;
}

/** The JWS algorithm of a key, as the controller picks it. */
export function algorithmOf(key: KeyObject): string {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    return curve === 'secp384r1' ? 'ES384' : curve === 'secp521r1' ? 'ES512' : 'ES256';
  }
  throw new Error(`unsupported JWT signing key type ${key.asymmetricKeyType}`);
}

export function jwtSigner(keyPem: string, certPem: string): JwtSigner {
  const privateKey = createPrivateKey(keyPem);
  const cert = new X509Certificate(certPem);
  return { privateKey, cert, alg: algorithmOf(privateKey), kid: createHash('sha1').update(cert.raw).digest('hex') };
}

/** Signs `claims` exactly as given (no iat/nbf added), header `{alg, kid, typ: "JWT"}`. */
export async function signJwt(signer: JwtSigner, claims: Record<string, unknown>): Promise<string> {
  const { SignJWT } = await loadJose();
  return new SignJWT(claims).setProtectedHeader({ alg: signer.alg, kid: signer.kid, typ: 'JWT' }).sign(signer.privateKey);
}

const DSA = { ES256: true, ES384: true, ES512: true } as Record<string, boolean>;

/**
 * Signs `claims` as `signJwt` does, with the signature computed on libuv's thread pool (the
 * callback form of `crypto.sign`), off the event loop: for session tokens, signed by the batch.
 */
export function signJwtOffThread(signer: JwtSigner, claims: Record<string, unknown>): Promise<string> {
  const input = `${Buffer.from(JSON.stringify({ alg: signer.alg, kid: signer.kid, typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  const key = DSA[signer.alg] ? { key: signer.privateKey, dsaEncoding: 'ieee-p1363' as const } : signer.privateKey;
  return new Promise((resolve, reject) =>
    sign(HASH[signer.alg] ?? 'sha256', Buffer.from(input), key, (err, signature) => (err ? reject(err) : resolve(`${input}.${signature.toString('base64url')}`))),
  );
}

/** The public JWK of a signer (with `kid`, `alg`, `use: "sig"` and its certificate in `x5c`). */
export function publicJwk(signer: JwtSigner): Record<string, unknown> {
  const jwk = signer.cert.publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
  return {
    ...jwk,
    kid: signer.kid,
    alg: signer.alg,
    use: 'sig',
    x5c: [signer.cert.raw.toString('base64')],
    x5t: createHash('sha1').update(signer.cert.raw).digest('base64url'),
    'x5t#S256': createHash('sha256').update(signer.cert.raw).digest('base64url'),
  };
}

/** The hash a JWS algorithm signs with. */
const HASH: Record<string, string> = { ES256: 'sha256', ES384: 'sha384', ES512: 'sha512', RS256: 'sha256' };

/** Signs a challenge nonce (its UTF-8 text) with the signer's key: base64 of a DER ECDSA / PKCS#1 signature. */
export function signNonce(signer: JwtSigner, nonce: string): string {
  return sign(HASH[signer.alg] ?? 'sha256', Buffer.from(nonce, 'utf8'), signer.privateKey).toString('base64');
}
