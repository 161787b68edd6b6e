/** The revocation types of OpenZiti (`rest_model.RevocationTypeEnum`). */
export type RevocationType = 'JTI' | 'API_SESSION' | 'IDENTITY';

/** What a revocation check needs of a token (its claims). */
export interface RevocableToken {
  jti?: string;
  z_asid?: string;
  sub?: string;
  /** Seconds since the epoch. */
  iat?: number;
}

/**
 * Revocations as the OIDC provider and the bearer resolution use them (OIDC.md "Revocations"):
 * stored in `revocations`, with a Redis marker per revocation so every gateway sees it at once.
 */
export interface RevocationPort {
  /**
   * Creates or replaces the revocation of `id` (JTI: a token id; API_SESSION: a session id;
   * IDENTITY: tokens of the identity issued before `issuedBefore`, default now), kept until
   * `expiresAt` (default now + the longest token lifetime); then sets its marker.
   */
  revoke(type: RevocationType, id: string, opts?: { expiresAt?: Date; issuedBefore?: Date; tags?: Record<string, unknown> }): Promise<void>;
  /** True when the token is revoked by its `jti`, its `z_asid`, or its `sub` (issued before the cutoff). */
  isRevoked(token: RevocableToken): Promise<boolean>;
}
