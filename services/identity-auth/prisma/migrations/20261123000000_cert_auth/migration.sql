-- identity_auth: certificate extension (issue 4). The certificate `extend` issued waits here until
-- `extend-verify` makes it the authenticator's certificate; until then it does not authenticate.

-- AlterTable
ALTER TABLE "authenticators"
    ADD COLUMN "unverified_cert_pem" TEXT,
    ADD COLUMN "unverified_fingerprint" TEXT;
