-- identity_auth: controller settings (the `global` settings and one override per controller) and
-- identity tracing.

-- CreateTable: `global` is the base every controller starts from; any other row is the override
-- of the controller whose id it carries (its id is that controller's id). "oidc" holds the lists
-- that are set (`redirectUris`, `postLogoutUris`); in an override a list that is absent inherits
-- the global value, and an empty one overrides it with nothing.
CREATE TABLE "controller_settings" (
    "id" TEXT NOT NULL,
    "oidc" JSONB NOT NULL DEFAULT '{}',
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "controller_settings_pkey" PRIMARY KEY ("id")
);

-- The global settings start with the URIs OpenZiti's OIDC endpoint allows when none are configured.
INSERT INTO "controller_settings" ("id", "oidc") VALUES ('global', '{
    "redirectUris": ["openziti://auth/callback", "https://127.0.0.1:*/auth/callback", "http://127.0.0.1:*/auth/callback",
                     "https://localhost:*/auth/callback", "http://localhost:*/auth/callback"],
    "postLogoutUris": ["openziti://auth/logout", "https://127.0.0.1:*/auth/logout", "http://127.0.0.1:*/auth/logout",
                       "https://localhost:*/auth/logout", "http://localhost:*/auth/logout"]
}');

-- AlterTable: an identity's requests are traced while "trace_until" is in the future.
ALTER TABLE "identities"
    ADD COLUMN "trace_id" TEXT,
    ADD COLUMN "trace_until" TIMESTAMPTZ(3),
    ADD COLUMN "trace_channels" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
