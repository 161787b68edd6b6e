-- What each transaction changed in the router data model (config types, configs, services and
-- their configs, service policies and what they select, identities and their service configs,
-- posture checks), noted by statement-level triggers, so that no write path can change the model
-- without the `router-data-model.changed` event. The writing transaction drains its own rows
-- (txid_current()) into that outbox event before it commits; rows of transactions that ended
-- without draining (a restore, SQL run by hand) are drained by the next one.
CREATE TABLE "rdm_pending" (
    "txid" BIGINT NOT NULL,
    "kind" TEXT NOT NULL,
    "id" TEXT NOT NULL
);
CREATE INDEX "rdm_pending_txid_idx" ON "rdm_pending" ("txid");

-- TG_ARGV: the change kind, the column holding the entity id. Updates note only rows that changed.
CREATE FUNCTION "rdm_note"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    EXECUTE format('INSERT INTO %I."rdm_pending" SELECT DISTINCT txid_current(), %L, n.%I FROM "rdm_new" n',
      TG_TABLE_SCHEMA, TG_ARGV[0], TG_ARGV[1]);
  ELSIF TG_OP = 'DELETE' THEN
    EXECUTE format('INSERT INTO %I."rdm_pending" SELECT DISTINCT txid_current(), %L, o.%I FROM "rdm_old" o',
      TG_TABLE_SCHEMA, TG_ARGV[0], TG_ARGV[1]);
  ELSE
    EXECUTE format('INSERT INTO %I."rdm_pending" SELECT DISTINCT txid_current(), %L, n.%3$I FROM "rdm_new" n JOIN "rdm_old" o ON o.%3$I = n.%3$I WHERE o IS DISTINCT FROM n',
      TG_TABLE_SCHEMA, TG_ARGV[0], TG_ARGV[1]);
  END IF;
  RETURN NULL;
END $$;

-- A truncated link table (the rebuild of every link) may have changed any service policy's selection.
CREATE FUNCTION "rdm_note_all_service_policies"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('INSERT INTO %1$I."rdm_pending" SELECT txid_current(), ''service-policy'', "id" FROM %1$I."service_policies"', TG_TABLE_SCHEMA);
  RETURN NULL;
END $$;

DO $$
DECLARE
  t RECORD;
BEGIN
  FOR t IN SELECT * FROM (VALUES
      ('config_types', 'config-type', 'id'),
      ('configs', 'config', 'id'),
      ('services', 'service', 'id'),
      ('service_configs', 'service', 'service_id'),
      ('service_policies', 'service-policy', 'id'),
      ('sp_identities', 'service-policy', 'policy_id'),
      ('sp_services', 'service-policy', 'policy_id'),
      ('sp_posture_checks', 'service-policy', 'policy_id'),
      ('identities', 'identity', 'id'),
      ('identity_service_configs', 'identity', 'identity_id'),
      ('posture_checks', 'posture-check', 'id')) AS v(tbl, kind, col)
  LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %I REFERENCING NEW TABLE AS "rdm_new" FOR EACH STATEMENT EXECUTE FUNCTION "rdm_note"(%L, %L)',
      t.tbl || '_rdm_insert', t.tbl, t.kind, t.col);
    EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %I REFERENCING OLD TABLE AS "rdm_old" NEW TABLE AS "rdm_new" FOR EACH STATEMENT EXECUTE FUNCTION "rdm_note"(%L, %L)',
      t.tbl || '_rdm_update', t.tbl, t.kind, t.col);
    EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %I REFERENCING OLD TABLE AS "rdm_old" FOR EACH STATEMENT EXECUTE FUNCTION "rdm_note"(%L, %L)',
      t.tbl || '_rdm_delete', t.tbl, t.kind, t.col);
  END LOOP;
  FOR t IN SELECT * FROM (VALUES ('sp_identities'), ('sp_services'), ('sp_posture_checks')) AS v(tbl) LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION "rdm_note_all_service_policies"()',
      t.tbl || '_rdm_truncate', t.tbl);
  END LOOP;
END $$;
