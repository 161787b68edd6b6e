import { createSchemaPool } from '@ziti/db-kit';
import { requireEnv } from '@ziti/service-kit';
import { SecretBox } from './domain/mfa/secret-box.js';
import { KeyRing, sqlKeyStore } from './oidc/key-ring.js';
import { SCHEMA } from './schema.js';

// `npm run oidc:rotate-key -w @ziti/identity-auth`: a new OIDC signing key now. The previous key
// keeps verifying (and stays in the JWKS) for a token lifetime, so nobody is logged out. Needs the
// secret that seals the keys: ZITI_MFA_SECRET, else ZITI_INTERNAL_SECRET (as the service).
async function main(): Promise<void> {
  const pool = createSchemaPool(requireEnv(process.env, 'DATABASE_URL'), SCHEMA);
  try {
    const box = new SecretBox(process.env.ZITI_MFA_SECRET || requireEnv(process.env, 'ZITI_INTERNAL_SECRET'));
    const kid = await new KeyRing(sqlKeyStore(pool), box).rotate();
    console.log(`new OIDC signing key ${kid}; replicas sign with it within 60 s`);
  } finally {
    await pool.end();
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
