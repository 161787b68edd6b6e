-- Whether a CA was created, and last changed, by an admin: only such a CA's certificates may log in
-- an admin or an identity holding permissions by externalId. CAs that exist already were made by admins.
ALTER TABLE "cas" ADD COLUMN "trusted_for_admins" BOOLEAN NOT NULL DEFAULT true;
