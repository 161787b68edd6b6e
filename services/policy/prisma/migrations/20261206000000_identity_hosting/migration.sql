-- identity-auth's hosting precedences and costs and appData of each identity, which the router data
-- model carries (SyncIdentity and the identity.* events send them). Rows projected before keep the
-- defaults until their identity changes again or the integrity check repairs them. The identities'
-- update trigger notes any changed row, so a change of these columns is a router data model change.
ALTER TABLE "identities"
    ADD COLUMN "default_hosting_precedence" TEXT NOT NULL DEFAULT 'default',
    ADD COLUMN "default_hosting_cost" INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN "service_hosting_precedences" JSONB NOT NULL DEFAULT '{}',
    ADD COLUMN "service_hosting_costs" JSONB NOT NULL DEFAULT '{}',
    ADD COLUMN "app_data" JSONB NOT NULL DEFAULT '{}';
