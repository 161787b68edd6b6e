-- The id of the request that caused an outbox event (null for background work), published with the event.
ALTER TABLE "outbox_events" ADD COLUMN "request_id" TEXT;
