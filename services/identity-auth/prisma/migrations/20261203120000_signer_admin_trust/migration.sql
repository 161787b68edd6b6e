-- Whether an external JWT signer was created, and last changed, by an admin: only such a signer may
-- log in an admin or an identity holding permissions. Signers that exist already were made by admins.
ALTER TABLE "external_jwt_signers" ADD COLUMN "trusted_for_admins" BOOLEAN NOT NULL DEFAULT true;
