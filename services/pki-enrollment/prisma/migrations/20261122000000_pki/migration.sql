-- The controller PKI (sealed private keys), settings, third-party CAs, enrollments, router
-- certificate state and API-session certificates.

CREATE TABLE "pki_material" (
    "name" TEXT PRIMARY KEY,
    "cert_pem" TEXT NOT NULL,
    "key_sealed" TEXT NOT NULL,
    "sans" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);

CREATE TABLE "settings" (
    "key" TEXT PRIMARY KEY,
    "value" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);

CREATE TABLE "cas" (
    "id" TEXT PRIMARY KEY,
    "name" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "cert_pem" TEXT NOT NULL,
    "is_verified" BOOLEAN NOT NULL DEFAULT false,
    "verification_token" TEXT NOT NULL,
    "is_auto_ca_enrollment_enabled" BOOLEAN NOT NULL DEFAULT false,
    "is_ott_ca_enrollment_enabled" BOOLEAN NOT NULL DEFAULT false,
    "is_auth_enabled" BOOLEAN NOT NULL DEFAULT false,
    "identity_roles" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "identity_name_format" TEXT NOT NULL,
    "external_id_claim" JSONB,
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX "cas_name_key" ON "cas" ("name");
CREATE UNIQUE INDEX "cas_fingerprint_key" ON "cas" ("fingerprint");

CREATE TABLE "enrollments" (
    "id" TEXT PRIMARY KEY,
    "method" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "jwt" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "identity_id" TEXT,
    "identity_name" TEXT,
    "edge_router_id" TEXT,
    "transit_router_id" TEXT,
    "router_name" TEXT,
    "ca_id" TEXT REFERENCES "cas" ("id") ON DELETE CASCADE,
    "username" TEXT,
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX "enrollments_token_key" ON "enrollments" ("token");
CREATE UNIQUE INDEX "enrollments_edge_router_id_key" ON "enrollments" ("edge_router_id");
CREATE UNIQUE INDEX "enrollments_transit_router_id_key" ON "enrollments" ("transit_router_id");
-- One outstanding enrollment per identity and method (ENROLLMENT_EXISTS).
CREATE UNIQUE INDEX "enrollments_identity_method_key" ON "enrollments" ("identity_id", "method") WHERE "identity_id" IS NOT NULL;
CREATE INDEX "enrollments_identity_id_idx" ON "enrollments" ("identity_id");
CREATE INDEX "enrollments_ca_id_idx" ON "enrollments" ("ca_id");

CREATE TABLE "router_certs" (
    "router_id" TEXT PRIMARY KEY,
    "router_type" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "cert_pem" TEXT NOT NULL,
    "server_cert_pem" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX "router_certs_fingerprint_key" ON "router_certs" ("fingerprint");

CREATE TABLE "api_session_certificates" (
    "id" TEXT PRIMARY KEY,
    "api_session_id" TEXT NOT NULL,
    "identity_id" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "cert_pem" TEXT NOT NULL,
    "valid_from" TIMESTAMPTZ(3) NOT NULL,
    "valid_to" TIMESTAMPTZ(3) NOT NULL,
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX "api_session_certificates_fingerprint_key" ON "api_session_certificates" ("fingerprint");
CREATE INDEX "api_session_certificates_api_session_id_idx" ON "api_session_certificates" ("api_session_id");
