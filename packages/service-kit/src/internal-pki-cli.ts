import { resolve } from 'node:path';
import { writeInternalPki } from './internal-pki.js';

// `npm run internal-pki -w @ziti/service-kit -- <dir> [--days N] [--dns name,name]`: a fresh
// internal CA and one certificate per process (gateway and every context) in <dir>/<context>/
// (ca.crt, tls.crt, tls.key), for contexts run as separate processes without cert-manager. Point
// each process's ZITI_INTERNAL_TLS_DIR at its directory. To rotate, issue again and copy the
// files in place: the processes re-read them within 30 s.
const args = process.argv.slice(2);
const dir = args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
const option = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
if (!dir) {
  process.stderr.write('usage: internal-pki <dir> [--days N] [--dns name,name]\n');
  process.exit(2);
}
const days = Number(option('days') ?? 365);
if (!Number.isInteger(days) || days < 1 || days > 3650) {
  process.stderr.write('--days must be a whole number of days from 1 to 3650\n');
  process.exit(2);
}
const dns = (option('dns') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
const written = writeInternalPki(resolve(dir), { days, dns });
for (const [name, path] of Object.entries(written)) process.stdout.write(`${name}: ZITI_INTERNAL_TLS_DIR=${path}\n`);
