import { startController } from '@ziti/controller';

/**
 * The controller under test, in its own process (the router double and the API client of the
 * benchmark do not share its event loop). Options arrive as JSON in argv[2]; the URL, CA and the
 * router control port go back over IPC; a `stop` message stops it.
 */
async function main(): Promise<void> {
  const opts = JSON.parse(process.argv[2] ?? '{}');
  // Log lines are made (their cost counts) and dropped instead of flooding the output.
  const ctl = await startController({ ...opts, log: () => undefined, logging: { destination: { write: () => true } } });
  process.send?.({ url: ctl.url, caCertPem: ctl.caCertPem, routerCtrlPort: ctl.routerCtrlPort });
  process.on('message', (m) => {
    if (m === 'stop') ctl.stop().finally(() => process.exit(0));
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
