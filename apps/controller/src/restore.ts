import { join, resolve } from 'node:path';
import { RestoreRefused } from '@ziti/db-kit';
import { DataDirInUseError } from './data-dir-lock.js';
import { restoreControllerSnapshot } from './restore-snapshot.js';

const USAGE = `usage: npm run restore -w @ziti/controller -- [--replace] <snapshot file>

Restores a database snapshot (POST /edge/management/v1/database/snapshot) into the database of
DATABASE_URL, or, without it, into the embedded PostgreSQL of the data directory (ZITI_DATA_DIR,
default ./data; the controller must not be running). A database whose schemas already hold data
is refused unless --replace is given, which drops those schemas first.`;

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const replace = args.includes('--replace');
  const rest = args.filter((a) => a !== '--replace');
  if (rest.length !== 1 || rest[0]!.startsWith('-')) {
    console.error(USAGE);
    return 2;
  }
  const env = process.env;
  const dataDir = resolve(env.ZITI_DATA_DIR || join(env.INIT_CWD || process.cwd(), 'data'));
  // npm runs the script in the workspace folder; a relative path is meant from where npm was invoked.
  const file = resolve(env.INIT_CWD || process.cwd(), rest[0]!);
  const log = (m: string) => console.log(`[restore] ${m}`);
  try {
    const restored = await restoreControllerSnapshot({ file, databaseUrl: env.DATABASE_URL || undefined, dataDir, replace, log });
    const rows = restored.reduce((n, c) => n + c.rows, 0);
    log(`done: ${rows} rows in ${restored.length} contexts restored from ${file}`);
    return 0;
  } catch (err) {
    if (err instanceof RestoreRefused || err instanceof DataDirInUseError) {
      console.error(`[restore] refused: ${err.message}`);
      return 1;
    }
    console.error(err);
    return 1;
  }
}

main().then((code) => process.exit(code));
