import { startController } from '@ziti/controller';

/**
 * The controller under test, in its own process (so the benchmark's client work does not share
 * its event loop). Options arrive as JSON in argv[2]; the URL and CA go back over IPC; a
 * `stop` message stops it.
 */
async function main(): Promise<void> {
  const opts = JSON.parse(process.argv[2] ?? '{}');
  // Log lines are made (their cost counts) and dropped instead of flooding the output.
  const ctl = await startController({ ...opts, log: () => undefined, logging: { destination: { write: () => true } } });
  process.send?.({ url: ctl.url, caCertPem: ctl.caCertPem });
  process.on('message', (m) => {
    if (m === 'stop') {
      ctl.stop().finally(() => process.exit(0));
    }
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
