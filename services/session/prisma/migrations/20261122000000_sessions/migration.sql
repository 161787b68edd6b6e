-- Sessions: one per (API session, service, type).
CREATE TABLE "sessions" (
    "id" TEXT PRIMARY KEY,
    "token" TEXT NOT NULL,
    "api_session_id" TEXT NOT NULL,
    "identity_id" TEXT NOT NULL,
    "service_id" TEXT NOT NULL,
    "service_name" TEXT NOT NULL DEFAULT '',
    "type" TEXT NOT NULL,
    "tags" JSONB NOT NULL DEFAULT '{}',
    "edge_routers" JSONB NOT NULL DEFAULT '[]',
    "service_policy_ids" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "posture_check_ids" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX "sessions_dedup_key" ON "sessions" ("api_session_id", "service_id", "type");
CREATE INDEX "sessions_identity_id_service_id_idx" ON "sessions" ("identity_id", "service_id");
CREATE INDEX "sessions_service_id_idx" ON "sessions" ("service_id");
-- Sessions whose creation involved posture checks, by identity (re-checked when the identity's posture changes).
CREATE INDEX "sessions_posture_identity_idx" ON "sessions" ("identity_id") WHERE cardinality("posture_check_ids") > 0;

-- Service-list change times per identity.
CREATE TABLE "identity_service_updates" (
    "identity_id" TEXT PRIMARY KEY,
    "last_change_at" TIMESTAMPTZ(3) NOT NULL
);
