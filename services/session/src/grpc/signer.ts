import { batched } from '@ziti/db-kit';
import type { SessionTokenClaims, SigningCertificate } from '@ziti/proto';
import type { TokenSigner } from '../domain/ports.js';

/** pki-enrollment's signing of session tokens (`SignSessionTokens`, `GetSigningCertificate`). */
export interface SessionTokenSource {
  sign(tokens: SessionTokenClaims[]): Promise<string[]>;
  signingCertificate(): Promise<SigningCertificate>;
}

/**
 * Session tokens are signed by pki-enrollment, which holds the edge server key (the key never
 * leaves it): the creates of one turn of the event loop share one `SignSessionTokens` call, and
 * the claims travel as their fields (pki-enrollment fixes `iss`, `aud` and `z_t`, so this context
 * can have nothing but session tokens signed). The issuer comes from the signing certificate's
 * answer, fetched once and kept (a failed fetch is retried on the next call).
 */
export function remoteSessionSigner(source: SessionTokenSource): TokenSigner {
  const signOne = batched((tokens: SessionTokenClaims[]) => source.sign(tokens), 128);
  let issuer: Promise<string> | undefined;
  return {
    sign(claims) {
      return signOne({
        id: String(claims.jti),
        serviceId: String(claims.sub),
        apiSessionId: String(claims.z_asid),
        identityId: String(claims.z_iid),
        sessionType: String(claims.z_st),
        legacy: claims.z_leg === true,
        issuedAt: Number(claims.iat),
        expiresAt: Number(claims.exp),
      });
    },
    issuer() {
      issuer ??= source.signingCertificate().then(
        (c) => c.issuer,
        (err: unknown) => {
          issuer = undefined;
          throw err;
        },
      );
      return issuer;
    },
  };
}
