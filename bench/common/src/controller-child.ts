import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { startController } from '@ziti/controller';
import { CONTEXT_NAMES, InternalCredentials, holdInternalCredentials, readInternalTlsDir } from '@ziti/service-kit';

/**
 * The controller under test, in its own process (the router doubles and the API client of a
 * benchmark do not share its event loop). Options arrive as JSON in argv[2]; the URL, CA, the
 * router control port and the contexts' addresses go back over IPC; a `stop` message stops it.
 * With `internalTlsDir` (the layout `writeInternalPki` writes) its contexts take their internal
 * identities from there instead of a CA made in memory, so that a context started as a separate
 * process from the same directory is one of theirs. With `logFile` its log lines go there.
 */
async function main(): Promise<void> {
  const { internalTlsDir, logFile, ...opts } = JSON.parse(process.argv[2] ?? '{}');
  if (internalTlsDir) holdInternalCredentials(...CONTEXT_NAMES.map((n) => new InternalCredentials(n, readInternalTlsDir(path.join(internalTlsDir, n)))));
  // Log lines are made (their cost counts) and dropped instead of flooding the output, or kept in `logFile`.
  const file = logFile ? createWriteStream(logFile, { flags: 'a' }) : undefined;
  const write = (s: string) => (file ? file.write(s) : true);
  const ctl = await startController({ ...opts, log: (m: string) => void write(`${m}\n`), logging: { destination: { write } } });
  process.send?.({ url: ctl.url, caCertPem: ctl.caCertPem, routerCtrlPort: ctl.routerCtrlPort, services: ctl.services });
  process.on('message', (m) => {
    if (m === 'stop') ctl.stop().finally(() => process.exit(0));
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
