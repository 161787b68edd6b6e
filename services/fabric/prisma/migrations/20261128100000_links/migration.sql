-- Routers' link listeners (from their hello): what peers dial, sent in PeerStateChanges.
ALTER TABLE "router_presence" ADD COLUMN "link_listeners" JSONB NOT NULL DEFAULT '[]';

-- Router-to-router links as their dialing routers report them.
CREATE TABLE "links" (
    "id" TEXT PRIMARY KEY,
    "src_router_id" TEXT NOT NULL,
    "dst_router_id" TEXT NOT NULL,
    "protocol" TEXT NOT NULL DEFAULT '',
    "dial_address" TEXT NOT NULL DEFAULT '',
    "iteration" BIGINT NOT NULL DEFAULT 0,
    "state" TEXT NOT NULL DEFAULT 'Connected',
    "static_cost" INTEGER NOT NULL DEFAULT 1,
    "src_latency" BIGINT NOT NULL DEFAULT 0,
    "dst_latency" BIGINT NOT NULL DEFAULT 0,
    "down" BOOLEAN NOT NULL DEFAULT false,
    "replica" TEXT NOT NULL DEFAULT '',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
CREATE INDEX "links_src_router_id_idx" ON "links" ("src_router_id");
CREATE INDEX "links_dst_router_id_idx" ON "links" ("dst_router_id");

-- The links a circuit's path crosses (one fewer than its routers).
ALTER TABLE "circuits" ADD COLUMN "links" TEXT[] NOT NULL DEFAULT '{}';
