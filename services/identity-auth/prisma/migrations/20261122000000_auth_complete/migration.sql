-- identity_auth: external JWT signers, TOTP MFA (and when a session completed it), and the certificate-authenticator flags.

-- CreateTable
CREATE TABLE "external_jwt_signers" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "issuer" TEXT NOT NULL,
    "audience" TEXT NOT NULL,
    "cert_pem" TEXT,
    "fingerprint" TEXT,
    "common_name" TEXT NOT NULL DEFAULT '',
    "not_before" TIMESTAMPTZ(3),
    "not_after" TIMESTAMPTZ(3),
    "jwks_endpoint" TEXT,
    "kid" TEXT,
    "claims_property" TEXT NOT NULL DEFAULT 'sub',
    "use_external_id" BOOLEAN NOT NULL DEFAULT false,
    "external_auth_url" TEXT,
    "client_id" TEXT,
    "scopes" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "target_token" TEXT NOT NULL DEFAULT 'ACCESS',
    "enroll_to_cert_enabled" BOOLEAN NOT NULL DEFAULT false,
    "enroll_to_token_enabled" BOOLEAN NOT NULL DEFAULT false,
    "enroll_name_claims_selector" TEXT NOT NULL DEFAULT '',
    "enroll_attribute_claims_selector" TEXT NOT NULL DEFAULT '',
    "enroll_auth_policy_id" TEXT,
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "external_jwt_signers_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "mfas" (
    "id" TEXT NOT NULL,
    "identity_id" TEXT NOT NULL,
    "is_verified" BOOLEAN NOT NULL DEFAULT false,
    "secret" TEXT NOT NULL,
    "recovery_codes" TEXT NOT NULL,
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "mfas_pkey" PRIMARY KEY ("id")
);

-- AlterTable
ALTER TABLE "authenticators"
    ADD COLUMN "is_issued_by_network" BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN "ca_id" TEXT,
    ADD COLUMN "is_extend_requested" BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN "is_key_roll_requested" BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN "extend_requested_at" TIMESTAMPTZ(3),
    ADD COLUMN "last_auth_resolved_to_root" BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN "last_extend_rolled_keys" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "api_sessions" ADD COLUMN "mfa_completed_at" TIMESTAMPTZ(3);

-- CreateIndex
CREATE UNIQUE INDEX "external_jwt_signers_name_key" ON "external_jwt_signers"("name");

-- CreateIndex
CREATE UNIQUE INDEX "external_jwt_signers_issuer_key" ON "external_jwt_signers"("issuer");

-- CreateIndex
CREATE UNIQUE INDEX "external_jwt_signers_fingerprint_key" ON "external_jwt_signers"("fingerprint");

-- CreateIndex
CREATE UNIQUE INDEX "external_jwt_signers_kid_key" ON "external_jwt_signers"("kid");

-- CreateIndex
CREATE UNIQUE INDEX "mfas_identity_id_key" ON "mfas"("identity_id");

-- CreateIndex
CREATE INDEX "authenticators_ca_id_idx" ON "authenticators"("ca_id");

-- CreateIndex
CREATE INDEX "auth_policies_primary_ext_jwt_allowed_signers_idx" ON "auth_policies" USING GIN ("primary_ext_jwt_allowed_signers");

-- CreateIndex
CREATE INDEX "auth_policies_secondary_required_ext_jwt_signer_idx" ON "auth_policies"("secondary_required_ext_jwt_signer");

-- AddForeignKey
ALTER TABLE "mfas" ADD CONSTRAINT "mfas_identity_id_fkey" FOREIGN KEY ("identity_id") REFERENCES "identities"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- CreateIndex (at most one authenticator per method and identity: MAX_AUTHENTICATOR_METHODS_REACHED)
CREATE UNIQUE INDEX "authenticators_identity_id_method_key" ON "authenticators"("identity_id", "method");
