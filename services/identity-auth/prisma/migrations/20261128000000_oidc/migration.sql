-- OIDC (OIDC.md): API sessions of OIDC logins, the provider's signing keys, and revocations.

-- `kind`: 'legacy' (zt-session) or 'oidc' (bearer tokens). `expires_at`: an OIDC session's end (its
-- refresh token's expiry, extended on refresh); legacy sessions slide on `last_activity_at` instead.
ALTER TABLE "api_sessions" ADD COLUMN "kind" TEXT NOT NULL DEFAULT 'legacy';
ALTER TABLE "api_sessions" ADD COLUMN "expires_at" TIMESTAMPTZ(3);
CREATE INDEX "api_sessions_expires_at_idx" ON "api_sessions"("expires_at") WHERE "expires_at" IS NOT NULL;

-- ES256 key pairs; the private key sealed with the secret box (aad = the key id). The newest
-- unretired key signs; retired keys verify until they are deleted.
CREATE TABLE "oidc_keys" (
    "id" TEXT NOT NULL,
    "alg" TEXT NOT NULL,
    "private_key" TEXT NOT NULL,
    "public_jwk" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "retired_at" TIMESTAMPTZ(3),
    CONSTRAINT "oidc_keys_pkey" PRIMARY KEY ("id")
);

-- Revoked tokens (JTI), API sessions (API_SESSION) and identities (IDENTITY: tokens issued before
-- `issued_before`), kept until `expires_at` (the longest a revoked token could still be valid).
CREATE TABLE "revocations" (
    "id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "issued_before" TIMESTAMPTZ(3),
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "revocations_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "revocations_expires_at_idx" ON "revocations"("expires_at");
