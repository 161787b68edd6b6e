-- identity_auth: initial schema (matches prisma/schema.prisma), built-in rows and the outbox.

-- CreateTable
CREATE TABLE "identity_types" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "is_system" BOOLEAN NOT NULL DEFAULT false,
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "identity_types_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "auth_policies" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "is_system" BOOLEAN NOT NULL DEFAULT false,
    "primary_cert_allowed" BOOLEAN NOT NULL DEFAULT true,
    "primary_cert_allow_expired_certs" BOOLEAN NOT NULL DEFAULT true,
    "primary_updb_allowed" BOOLEAN NOT NULL DEFAULT true,
    "primary_updb_min_password_length" INTEGER NOT NULL DEFAULT 5,
    "primary_updb_require_special_char" BOOLEAN NOT NULL DEFAULT false,
    "primary_updb_require_number_char" BOOLEAN NOT NULL DEFAULT false,
    "primary_updb_require_mixed_case" BOOLEAN NOT NULL DEFAULT false,
    "primary_updb_max_attempts" INTEGER NOT NULL DEFAULT 0,
    "primary_updb_lockout_duration_minutes" INTEGER NOT NULL DEFAULT 0,
    "primary_ext_jwt_allowed" BOOLEAN NOT NULL DEFAULT true,
    "primary_ext_jwt_allowed_signers" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "secondary_require_totp" BOOLEAN NOT NULL DEFAULT false,
    "secondary_required_ext_jwt_signer" TEXT,
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "auth_policies_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "identities" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "type_id" TEXT NOT NULL,
    "is_admin" BOOLEAN NOT NULL DEFAULT false,
    "is_default_admin" BOOLEAN NOT NULL DEFAULT false,
    "is_system" BOOLEAN NOT NULL DEFAULT false,
    "role_attributes" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "tags" JSONB NOT NULL DEFAULT '{}',
    "app_data" JSONB NOT NULL DEFAULT '{}',
    "auth_policy_id" TEXT NOT NULL DEFAULT 'default',
    "external_id" TEXT,
    "default_hosting_precedence" TEXT NOT NULL DEFAULT 'default',
    "default_hosting_cost" INTEGER NOT NULL DEFAULT 0,
    "service_hosting_precedences" JSONB NOT NULL DEFAULT '{}',
    "service_hosting_costs" JSONB NOT NULL DEFAULT '{}',
    "permissions" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "sdk_info" JSONB NOT NULL DEFAULT '{}',
    "env_info" JSONB NOT NULL DEFAULT '{}',
    "disabled" BOOLEAN NOT NULL DEFAULT false,
    "disabled_at" TIMESTAMPTZ(3),
    "disabled_until" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "identities_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "authenticators" (
    "id" TEXT NOT NULL,
    "identity_id" TEXT NOT NULL,
    "method" TEXT NOT NULL,
    "username" TEXT,
    "password" TEXT,
    "salt" TEXT,
    "fingerprint" TEXT,
    "cert_pem" TEXT,
    "failed_attempts" INTEGER NOT NULL DEFAULT 0,
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "authenticators_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_sessions" (
    "id" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "identity_id" TEXT NOT NULL,
    "authenticator_id" TEXT NOT NULL,
    "ip_address" TEXT NOT NULL DEFAULT '',
    "config_types" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "is_mfa_required" BOOLEAN NOT NULL DEFAULT false,
    "is_mfa_complete" BOOLEAN NOT NULL DEFAULT false,
    "is_cert_extendable" BOOLEAN NOT NULL DEFAULT false,
    "is_cert_extend_requested" BOOLEAN NOT NULL DEFAULT false,
    "is_cert_key_roll_requested" BOOLEAN NOT NULL DEFAULT false,
    "improper_client_cert_chain" BOOLEAN NOT NULL DEFAULT false,
    "last_activity_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "api_sessions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "outbox_events" (
    "id" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "published_at" TIMESTAMPTZ(3),

    CONSTRAINT "outbox_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "identity_types_name_key" ON "identity_types"("name");

-- CreateIndex
CREATE UNIQUE INDEX "auth_policies_name_key" ON "auth_policies"("name");

-- CreateIndex
CREATE UNIQUE INDEX "identities_name_key" ON "identities"("name");

-- CreateIndex
CREATE UNIQUE INDEX "identities_external_id_key" ON "identities"("external_id");

-- CreateIndex
CREATE INDEX "identities_type_id_idx" ON "identities"("type_id");

-- CreateIndex
CREATE INDEX "identities_auth_policy_id_idx" ON "identities"("auth_policy_id");

-- CreateIndex
CREATE INDEX "identities_role_attributes_idx" ON "identities" USING GIN ("role_attributes");

-- CreateIndex
CREATE UNIQUE INDEX "authenticators_username_key" ON "authenticators"("username");

-- CreateIndex
CREATE UNIQUE INDEX "authenticators_fingerprint_key" ON "authenticators"("fingerprint");

-- CreateIndex
CREATE INDEX "authenticators_identity_id_idx" ON "authenticators"("identity_id");

-- CreateIndex
CREATE UNIQUE INDEX "api_sessions_token_key" ON "api_sessions"("token");

-- CreateIndex
CREATE INDEX "api_sessions_identity_id_idx" ON "api_sessions"("identity_id");

-- CreateIndex
CREATE INDEX "api_sessions_last_activity_at_idx" ON "api_sessions"("last_activity_at");

-- CreateIndex (partial; not expressible in schema.prisma): the relay scans unpublished events.
CREATE INDEX "outbox_events_unpublished_idx" ON "outbox_events" ("occurred_at") WHERE "published_at" IS NULL;

-- AddForeignKey
ALTER TABLE "identities" ADD CONSTRAINT "identities_type_id_fkey" FOREIGN KEY ("type_id") REFERENCES "identity_types"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "identities" ADD CONSTRAINT "identities_auth_policy_id_fkey" FOREIGN KEY ("auth_policy_id") REFERENCES "auth_policies"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "authenticators" ADD CONSTRAINT "authenticators_identity_id_fkey" FOREIGN KEY ("identity_id") REFERENCES "identities"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_sessions" ADD CONSTRAINT "api_sessions_identity_id_fkey" FOREIGN KEY ("identity_id") REFERENCES "identities"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Built-ins (OpenZiti db/migration_initialize.go): identity types and the default auth policy.
INSERT INTO "identity_types" ("id", "name") VALUES ('Default', 'Default'), ('Router', 'Router');

INSERT INTO "auth_policies" ("id", "name", "is_system") VALUES ('default', 'Default', true);
