-- Posture check types: the built-in records (db/migration_initialize.go, PROCESS_MULTI from a later migration).
CREATE TABLE "posture_check_types" (
    "id" TEXT PRIMARY KEY,
    "name" TEXT NOT NULL,
    "operating_systems" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);

INSERT INTO "posture_check_types" ("id", "name", "operating_systems") VALUES
  ('OS', 'Operating System Check', '[{"type":"Windows","versions":["Vista","7","8","10","2000"]},{"type":"Linux","versions":["4.14","4.19","5.4","5.9"]},{"type":"Android","versions":["9","10","11"]},{"type":"macOS","versions":["10.15","11.0"]},{"type":"iOS","versions":["11","12"]}]'),
  ('PROCESS', 'Process Check', '[{"type":"Windows","versions":["Vista","7","8","10","2000"]},{"type":"macOS","versions":["10.15","11.0"]},{"type":"Linux","versions":["4.14","4.19","5.4","5.9"]}]'),
  ('DOMAIN', 'Windows Domain Check', '[{"type":"Windows","versions":["Vista","7","8","10","2000"]}]'),
  ('MAC', 'MAC Address Check', '[{"type":"Windows","versions":["Vista","7","8","10","2000"]},{"type":"Linux","versions":["4.14","4.19","5.4","5.9"]},{"type":"macOS","versions":["10.15","11.0"]},{"type":"Android","versions":["9","10","11"]}]'),
  ('PROCESS_MULTI', 'Process Multi Check', '[{"type":"Windows","versions":[]},{"type":"macOS","versions":[]},{"type":"Linux","versions":[]}]');

-- Posture checks.
CREATE TABLE "posture_checks" (
    "id" TEXT PRIMARY KEY,
    "name" TEXT NOT NULL,
    "type_id" TEXT NOT NULL,
    "role_attributes" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "tags" JSONB NOT NULL DEFAULT '{}',
    "version" INTEGER NOT NULL DEFAULT 1,
    "data" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX "posture_checks_name_key" ON "posture_checks" ("name");
CREATE INDEX "posture_checks_type_id_idx" ON "posture_checks" ("type_id");
CREATE INDEX "posture_checks_role_attributes_idx" ON "posture_checks" USING GIN ("role_attributes");
