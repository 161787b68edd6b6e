import { type KeyObject, createPrivateKey, sign } from 'node:crypto';
import type { SigningKey } from '@ziti/proto';
import type { TokenSigner } from '../domain/ports.js';

interface Loaded {
  key: KeyObject;
  header: string;
  digest: string;
  ecdsa: boolean;
  issuer: string;
}

const DIGESTS: Record<string, string> = { ES256: 'sha256', ES384: 'sha384', ES512: 'sha512', RS256: 'sha256' };
const b64url = (s: string | Buffer) => Buffer.from(s).toString('base64url');

/**
 * A compact JWS (JWT) signature of `claims` with a loaded key: ES256/384/512 (raw r||s) or RS256.
 * The signature is computed on libuv's thread pool (the callback form of `crypto.sign`), off the
 * event loop that serves the requests.
 */
function signJwt(k: Loaded, claims: Record<string, unknown>): Promise<string> {
  const input = `${k.header}.${b64url(JSON.stringify(claims))}`;
  return new Promise((resolve, reject) =>
    sign(k.digest, Buffer.from(input), k.ecdsa ? { key: k.key, dsaEncoding: 'ieee-p1363' } : k.key, (err, signature) =>
      err ? reject(err) : resolve(`${input}.${signature.toString('base64url')}`),
    ),
  );
}

/**
 * Signs session tokens with the controller's signing key (the server certificate's key, from
 * pki-enrollment's GetSigningKey), fetched on first use and kept; a failed fetch is retried on the
 * next call. Header: `alg` of the key, `kid` = hex SHA-1 of the certificate, `typ: JWT`.
 */
export function signingKeySigner(source: { get(): Promise<SigningKey> }): TokenSigner {
  let loading: Promise<Loaded> | undefined;
  const load = () => {
    loading ??= source.get().then(
      (k) => {
        const alg = k.alg || 'ES256';
        const digest = DIGESTS[alg];
        if (!digest) throw new Error(`unsupported signing algorithm ${alg}`);
        return {
          key: createPrivateKey(k.keyPem),
          header: b64url(JSON.stringify({ alg, kid: k.kid, typ: 'JWT' })),
          digest,
          ecdsa: alg.startsWith('ES'),
          issuer: k.issuer,
        };
      },
      (err: unknown) => {
        loading = undefined;
        throw err;
      },
    );
    return loading;
  };
  return {
    async sign(claims) {
      return signJwt(await load(), claims);
    },
    async issuer() {
      return (await load()).issuer;
    },
  };
}
