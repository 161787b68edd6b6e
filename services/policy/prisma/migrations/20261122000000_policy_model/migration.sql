-- The policy context's model: config types and configs, services, routers (edge, transit and
-- fabric), terminators, the three policy kinds, the projections of identities and posture checks
-- owned by other contexts, and the denormalised links maintained at write time (reference §5.2).

-- ---------------------------------------------------------------- role selector helpers
-- `#attr` → attr, `@id` → id, `#all` → true. IMMUTABLE so they can be used in any expression.
CREATE FUNCTION "role_ids"("roles" TEXT[]) RETURNS TEXT[] LANGUAGE sql IMMUTABLE AS
$$ SELECT coalesce(array_agg(substr(r, 2)), '{}') FROM unnest("roles") AS r WHERE left(r, 1) = '@' $$;
CREATE FUNCTION "role_attrs"("roles" TEXT[]) RETURNS TEXT[] LANGUAGE sql IMMUTABLE AS
$$ SELECT coalesce(array_agg(substr(r, 2)), '{}') FROM unnest("roles") AS r WHERE left(r, 1) = '#' AND r <> '#all' $$;
-- Whether a policy role list selects an entity (§5.1): its @id, #all, or its attributes under the semantic.
CREATE FUNCTION "role_match"("roles" TEXT[], "semantic" TEXT, "entity_id" TEXT, "attrs" TEXT[]) RETURNS BOOLEAN LANGUAGE sql IMMUTABLE AS
$$ SELECT ('@' || "entity_id") = ANY("roles") OR '#all' = ANY("roles")
     OR (cardinality(role_attrs("roles")) > 0 AND CASE WHEN "semantic" = 'AnyOf'
           THEN role_attrs("roles") && "attrs" ELSE role_attrs("roles") <@ "attrs" END) $$;

-- ---------------------------------------------------------------- projections
-- identity-auth's identities, fed by SyncIdentity and the identity.* events; also the local
-- system identities of tunneler-enabled edge routers (is_system, type Router).
CREATE TABLE "identities" (
    "id" TEXT PRIMARY KEY,
    "name" TEXT NOT NULL,
    "role_attributes" TEXT[] NOT NULL DEFAULT '{}',
    "is_admin" BOOLEAN NOT NULL DEFAULT false,
    "is_default_admin" BOOLEAN NOT NULL DEFAULT false,
    "disabled" BOOLEAN NOT NULL DEFAULT false,
    "type_id" TEXT NOT NULL DEFAULT 'Default',
    "external_id" TEXT,
    "auth_policy_id" TEXT NOT NULL DEFAULT 'default',
    "is_system" BOOLEAN NOT NULL DEFAULT false,
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
CREATE INDEX "identities_role_attributes_idx" ON "identities" USING gin ("role_attributes");
CREATE INDEX "identities_name_idx" ON "identities" ("name");

-- The posture context's checks, fed by SyncPostureCheck and the posture-check.* events.
CREATE TABLE "posture_checks" (
    "id" TEXT PRIMARY KEY,
    "name" TEXT NOT NULL,
    "type_id" TEXT NOT NULL,
    "role_attributes" TEXT[] NOT NULL DEFAULT '{}',
    "version" BIGINT NOT NULL DEFAULT 1,
    "detail" JSONB,
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
CREATE INDEX "posture_checks_role_attributes_idx" ON "posture_checks" USING gin ("role_attributes");

-- A deleted projected entity, so that a late (stale) update can not bring it back.
CREATE TABLE "projection_tombstones" (
    "kind" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    PRIMARY KEY ("kind", "id")
);

-- ---------------------------------------------------------------- configs
CREATE TABLE "config_types" (
    "id" TEXT PRIMARY KEY,
    "name" TEXT NOT NULL UNIQUE,
    "schema" JSONB NOT NULL DEFAULT '{}',
    "target" TEXT,
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);

CREATE TABLE "configs" (
    "id" TEXT PRIMARY KEY,
    "name" TEXT NOT NULL UNIQUE,
    "config_type_id" TEXT NOT NULL REFERENCES "config_types" ("id") ON DELETE RESTRICT,
    "data" JSONB NOT NULL DEFAULT '{}',
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
CREATE INDEX "configs_config_type_id_idx" ON "configs" ("config_type_id");

-- ---------------------------------------------------------------- services
CREATE TABLE "services" (
    "id" TEXT PRIMARY KEY,
    "name" TEXT NOT NULL UNIQUE,
    "role_attributes" TEXT[] NOT NULL DEFAULT '{}',
    "encryption_required" BOOLEAN NOT NULL DEFAULT false,
    "max_idle_time_millis" BIGINT NOT NULL DEFAULT 0,
    "terminator_strategy" TEXT NOT NULL DEFAULT 'smartrouting',
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
CREATE INDEX "services_role_attributes_idx" ON "services" USING gin ("role_attributes");

-- A service's configs, in the order given; at most one per config type.
CREATE TABLE "service_configs" (
    "service_id" TEXT NOT NULL REFERENCES "services" ("id") ON DELETE CASCADE,
    "config_id" TEXT NOT NULL REFERENCES "configs" ("id") ON DELETE CASCADE,
    "config_type_id" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    PRIMARY KEY ("service_id", "config_id"),
    UNIQUE ("service_id", "config_type_id")
);
CREATE INDEX "service_configs_config_id_idx" ON "service_configs" ("config_id");

-- Identity-specific overrides (`/identities/{id}/service-configs`): one config per (identity, service, type).
CREATE TABLE "identity_service_configs" (
    "identity_id" TEXT NOT NULL REFERENCES "identities" ("id") ON DELETE CASCADE,
    "service_id" TEXT NOT NULL REFERENCES "services" ("id") ON DELETE CASCADE,
    "config_type_id" TEXT NOT NULL,
    "config_id" TEXT NOT NULL REFERENCES "configs" ("id") ON DELETE CASCADE,
    PRIMARY KEY ("identity_id", "service_id", "config_type_id")
);
CREATE INDEX "identity_service_configs_config_id_idx" ON "identity_service_configs" ("config_id");

-- ---------------------------------------------------------------- routers and terminators
-- kind: 'edge' (/edge-routers), 'transit' (/transit-routers), 'fabric' (/routers create). /routers lists all.
CREATE TABLE "routers" (
    "id" TEXT PRIMARY KEY,
    "name" TEXT NOT NULL UNIQUE,
    "kind" TEXT NOT NULL,
    "fingerprint" TEXT,
    "cost" INTEGER NOT NULL DEFAULT 0,
    "no_traversal" BOOLEAN NOT NULL DEFAULT false,
    "disabled" BOOLEAN NOT NULL DEFAULT false,
    "ctrl_chan_listeners" JSONB NOT NULL DEFAULT '{}',
    "role_attributes" TEXT[] NOT NULL DEFAULT '{}',
    "is_tunneler_enabled" BOOLEAN NOT NULL DEFAULT false,
    "app_data" JSONB NOT NULL DEFAULT '{}',
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
CREATE INDEX "routers_role_attributes_idx" ON "routers" USING gin ("role_attributes");
CREATE INDEX "routers_kind_idx" ON "routers" ("kind");

CREATE TABLE "router_configs" (
    "router_id" TEXT NOT NULL REFERENCES "routers" ("id") ON DELETE CASCADE,
    "config_id" TEXT NOT NULL REFERENCES "configs" ("id") ON DELETE CASCADE,
    "position" INTEGER NOT NULL,
    PRIMARY KEY ("router_id", "config_id")
);
CREATE INDEX "router_configs_config_id_idx" ON "router_configs" ("config_id");

CREATE TABLE "terminators" (
    "id" TEXT PRIMARY KEY,
    "service_id" TEXT NOT NULL REFERENCES "services" ("id") ON DELETE CASCADE,
    "router_id" TEXT NOT NULL REFERENCES "routers" ("id") ON DELETE CASCADE,
    "binding" TEXT NOT NULL,
    "address" TEXT NOT NULL,
    "identity" TEXT NOT NULL DEFAULT '',
    "cost" INTEGER NOT NULL DEFAULT 0,
    "precedence" TEXT NOT NULL DEFAULT 'default',
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
CREATE INDEX "terminators_service_id_idx" ON "terminators" ("service_id");
CREATE INDEX "terminators_router_id_idx" ON "terminators" ("router_id");

-- ---------------------------------------------------------------- policies
CREATE TABLE "service_policies" (
    "id" TEXT PRIMARY KEY,
    "name" TEXT NOT NULL UNIQUE,
    "type" TEXT NOT NULL,
    "semantic" TEXT NOT NULL DEFAULT 'AllOf',
    "identity_roles" TEXT[] NOT NULL DEFAULT '{}',
    "service_roles" TEXT[] NOT NULL DEFAULT '{}',
    "posture_check_roles" TEXT[] NOT NULL DEFAULT '{}',
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);

CREATE TABLE "edge_router_policies" (
    "id" TEXT PRIMARY KEY,
    "name" TEXT NOT NULL UNIQUE,
    "semantic" TEXT NOT NULL DEFAULT 'AllOf',
    "identity_roles" TEXT[] NOT NULL DEFAULT '{}',
    "edge_router_roles" TEXT[] NOT NULL DEFAULT '{}',
    "is_system" BOOLEAN NOT NULL DEFAULT false,
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);

CREATE TABLE "service_edge_router_policies" (
    "id" TEXT PRIMARY KEY,
    "name" TEXT NOT NULL UNIQUE,
    "semantic" TEXT NOT NULL DEFAULT 'AllOf',
    "service_roles" TEXT[] NOT NULL DEFAULT '{}',
    "edge_router_roles" TEXT[] NOT NULL DEFAULT '{}',
    "tags" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);

-- ---------------------------------------------------------------- policy ↔ entity links (write-time evaluation)
CREATE TABLE "sp_identities" (
    "policy_id" TEXT NOT NULL REFERENCES "service_policies" ("id") ON DELETE CASCADE,
    "identity_id" TEXT NOT NULL REFERENCES "identities" ("id") ON DELETE CASCADE,
    PRIMARY KEY ("policy_id", "identity_id")
);
CREATE INDEX "sp_identities_identity_idx" ON "sp_identities" ("identity_id");

CREATE TABLE "sp_services" (
    "policy_id" TEXT NOT NULL REFERENCES "service_policies" ("id") ON DELETE CASCADE,
    "service_id" TEXT NOT NULL REFERENCES "services" ("id") ON DELETE CASCADE,
    PRIMARY KEY ("policy_id", "service_id")
);
CREATE INDEX "sp_services_service_idx" ON "sp_services" ("service_id");

CREATE TABLE "sp_posture_checks" (
    "policy_id" TEXT NOT NULL REFERENCES "service_policies" ("id") ON DELETE CASCADE,
    "posture_check_id" TEXT NOT NULL REFERENCES "posture_checks" ("id") ON DELETE CASCADE,
    PRIMARY KEY ("policy_id", "posture_check_id")
);
CREATE INDEX "sp_posture_checks_check_idx" ON "sp_posture_checks" ("posture_check_id");

CREATE TABLE "erp_identities" (
    "policy_id" TEXT NOT NULL REFERENCES "edge_router_policies" ("id") ON DELETE CASCADE,
    "identity_id" TEXT NOT NULL REFERENCES "identities" ("id") ON DELETE CASCADE,
    PRIMARY KEY ("policy_id", "identity_id")
);
CREATE INDEX "erp_identities_identity_idx" ON "erp_identities" ("identity_id");

CREATE TABLE "erp_edge_routers" (
    "policy_id" TEXT NOT NULL REFERENCES "edge_router_policies" ("id") ON DELETE CASCADE,
    "router_id" TEXT NOT NULL REFERENCES "routers" ("id") ON DELETE CASCADE,
    PRIMARY KEY ("policy_id", "router_id")
);
CREATE INDEX "erp_edge_routers_router_idx" ON "erp_edge_routers" ("router_id");

CREATE TABLE "serp_services" (
    "policy_id" TEXT NOT NULL REFERENCES "service_edge_router_policies" ("id") ON DELETE CASCADE,
    "service_id" TEXT NOT NULL REFERENCES "services" ("id") ON DELETE CASCADE,
    PRIMARY KEY ("policy_id", "service_id")
);
CREATE INDEX "serp_services_service_idx" ON "serp_services" ("service_id");

CREATE TABLE "serp_edge_routers" (
    "policy_id" TEXT NOT NULL REFERENCES "service_edge_router_policies" ("id") ON DELETE CASCADE,
    "router_id" TEXT NOT NULL REFERENCES "routers" ("id") ON DELETE CASCADE,
    PRIMARY KEY ("policy_id", "router_id")
);
CREATE INDEX "serp_edge_routers_router_idx" ON "serp_edge_routers" ("router_id");

-- ---------------------------------------------------------------- ref-counted pairs (§5.2)
-- Derived data, millions of rows at scale: no foreign keys (their per-row checks dominate bulk
-- writes); an entity is detached from every policy, its pairs included, before it is deleted.
-- dial / bind = how many Dial / Bind service policies link the identity and the service.
CREATE TABLE "identity_services" (
    "identity_id" TEXT NOT NULL,
    "service_id" TEXT NOT NULL,
    "dial" INTEGER NOT NULL DEFAULT 0,
    "bind" INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY ("identity_id", "service_id")
);
CREATE INDEX "identity_services_service_idx" ON "identity_services" ("service_id");

-- n = how many edge router policies link the identity and the router.
CREATE TABLE "identity_edge_routers" (
    "identity_id" TEXT NOT NULL,
    "router_id" TEXT NOT NULL,
    "n" INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY ("identity_id", "router_id")
);
CREATE INDEX "identity_edge_routers_router_idx" ON "identity_edge_routers" ("router_id");

-- n = how many service edge router policies link the service and the router.
CREATE TABLE "service_edge_routers" (
    "service_id" TEXT NOT NULL,
    "router_id" TEXT NOT NULL,
    "n" INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY ("service_id", "router_id")
);
CREATE INDEX "service_edge_routers_router_idx" ON "service_edge_routers" ("router_id");

-- Pairs whose counts reached zero are deleted right after each decrement; these partial indexes
-- find them without scanning the tables.
CREATE INDEX "identity_services_zero_idx" ON "identity_services" ("identity_id") WHERE "dial" <= 0 AND "bind" <= 0;
CREATE INDEX "identity_edge_routers_zero_idx" ON "identity_edge_routers" ("identity_id") WHERE "n" <= 0;
CREATE INDEX "service_edge_routers_zero_idx" ON "service_edge_routers" ("service_id") WHERE "n" <= 0;
