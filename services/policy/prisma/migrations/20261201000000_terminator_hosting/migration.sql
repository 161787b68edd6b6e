-- What OpenZiti's terminators carry for a hosting SDK's bind through a router (CreateTerminatorV2):
-- the hosting identity, the instance secret (never rendered), the static peer data (decimal key ->
-- base64 value), whether the controller made it (`is_system`: router-created edge terminators) and
-- the precedence saved while a health check overrides it. "identity" stays the instance id (the
-- Edge API's `identity`, the fabric API's `instanceId`).
ALTER TABLE "terminators" ADD COLUMN "host_id" TEXT NOT NULL DEFAULT '';
ALTER TABLE "terminators" ADD COLUMN "instance_secret" TEXT;
ALTER TABLE "terminators" ADD COLUMN "peer_data" JSONB NOT NULL DEFAULT '{}';
ALTER TABLE "terminators" ADD COLUMN "is_system" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "terminators" ADD COLUMN "saved_precedence" TEXT;
