-- CreateTable
CREATE TABLE "outbox_events" (
    "id" UUID PRIMARY KEY,
    "type" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "published_at" TIMESTAMPTZ(3)
);

-- CreateIndex
CREATE INDEX "outbox_events_unpublished_idx" ON "outbox_events" ("occurred_at") WHERE "published_at" IS NULL;
