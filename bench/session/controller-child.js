'use strict';
// The controller under test, in its own process (the benchmark's client work must not share its
// event loop). Options arrive as JSON in argv[2]; the URL and CA go back over IPC; `stop` stops it.
const { startController } = require('@ziti/controller/dist/controller.js');

async function main() {
  const opts = JSON.parse(process.argv[2] || '{}');
  const ctl = await startController({ ...opts, log: process.env.BENCH_LOG ? (m) => console.log(`[controller] ${m}`) : () => undefined });
  process.send({ url: ctl.url, caCertPem: ctl.caCertPem });
  process.on('message', (m) => {
    if (m === 'stop') ctl.stop().finally(() => process.exit(0));
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
