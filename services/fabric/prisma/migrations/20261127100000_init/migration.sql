-- CreateTable
CREATE TABLE "router_presence" (
    "router_id" TEXT PRIMARY KEY,
    "connected" BOOLEAN NOT NULL DEFAULT false,
    "is_edge" BOOLEAN NOT NULL DEFAULT false,
    "sync_status" TEXT NOT NULL DEFAULT 'SYNC_UNKNOWN',
    "hostname" TEXT NOT NULL DEFAULT '',
    "supported_protocols" JSONB NOT NULL DEFAULT '{}',
    "version_info" JSONB,
    "listener_addresses" TEXT[] NOT NULL DEFAULT '{}',
    "remote_address" TEXT NOT NULL DEFAULT '',
    "connection_id" TEXT NOT NULL DEFAULT '',
    "replica" TEXT NOT NULL DEFAULT '',
    "connected_at" TIMESTAMPTZ(3),
    "disconnected_at" TIMESTAMPTZ(3)
);

-- CreateTable
CREATE TABLE "rdm_state" (
    "id" INTEGER PRIMARY KEY DEFAULT 1 CHECK ("id" = 1),
    "timeline_id" TEXT NOT NULL,
    "index" BIGINT NOT NULL
);

-- CreateTable
CREATE TABLE "identity_connections" (
    "identity_id" TEXT PRIMARY KEY,
    "router_id" TEXT NOT NULL,
    "seen_at" TIMESTAMPTZ(3) NOT NULL
);

-- CreateTable
CREATE TABLE "circuits" (
    "id" TEXT PRIMARY KEY,
    "service_id" TEXT NOT NULL,
    "client_id" TEXT NOT NULL,
    "identity_id" TEXT NOT NULL,
    "terminator_id" TEXT NOT NULL,
    "instance_id" TEXT NOT NULL DEFAULT '',
    "path" TEXT[] NOT NULL,
    "ingress_id" TEXT NOT NULL,
    "egress_id" TEXT NOT NULL,
    "replica" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
