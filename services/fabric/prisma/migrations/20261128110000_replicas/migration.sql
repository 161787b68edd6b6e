-- The live replicas of the router control plane: each refreshes its row; one whose row is stale
-- is gone, and another takes over what it held (its circuits, its routers' presence).
CREATE TABLE "replicas" (
    "id" TEXT PRIMARY KEY,
    "relay_address" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);

-- What a replica needs to reroute or unroute a circuit it took over.
ALTER TABLE "circuits" ADD COLUMN "target" JSONB NOT NULL DEFAULT '{}';
ALTER TABLE "circuits" ADD COLUMN "tags" JSONB NOT NULL DEFAULT '{}';
CREATE INDEX "circuits_replica_idx" ON "circuits" ("replica");

-- The router data model's change sets, written by the replica that leads the model (one at a
-- time) and read by every replica in index order; the last ones are kept for resubscriptions.
CREATE TABLE "rdm_change_sets" (
    "index" BIGINT PRIMARY KEY,
    "previous_index" BIGINT NOT NULL,
    "timeline_id" TEXT NOT NULL,
    "changes" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);
