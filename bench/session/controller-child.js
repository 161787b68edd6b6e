'use strict';
// The controller under test, in its own process (the benchmark's client work must not share its
// event loop). Options arrive as JSON in argv[2]; the URL and CA go back over IPC; `stop` stops it.
// With BENCH_PROFILE=<dir>, `profile-start` / `profile-stop <name>` take a CPU profile of this
// process (V8 inspector) and write it to <dir>/<name>.cpuprofile.
const { writeFileSync } = require('node:fs');
const { Session } = require('node:inspector');
const { join } = require('node:path');
const { startController } = require('@ziti/controller/dist/controller.js');

function profiler(dir) {
  const session = new Session();
  session.connect();
  const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));
  return {
    async start() {
      await post('Profiler.enable');
      await post('Profiler.start');
    },
    async stop(name) {
      const { profile } = await post('Profiler.stop');
      writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    },
  };
}

async function main() {
  const opts = JSON.parse(process.argv[2] || '{}');
  // Log lines are made (their cost counts) and dropped, unless BENCH_LOG asks to see them.
  const ctl = await startController({
    ...opts,
    log: process.env.BENCH_LOG ? (m) => console.log(`[controller] ${m}`) : () => undefined,
    logging: process.env.BENCH_LOG ? undefined : { destination: { write: () => true } },
  });
  const prof = process.env.BENCH_PROFILE ? profiler(process.env.BENCH_PROFILE) : undefined;
  process.send({ url: ctl.url, caCertPem: ctl.caCertPem });
  process.on('message', (m) => {
    if (m === 'stop') ctl.stop().finally(() => process.exit(0));
    else if (m === 'profile-start' && prof) prof.start().then(() => process.send('profile-started'));
    else if (typeof m === 'string' && m.startsWith('profile-stop ') && prof) prof.stop(m.slice(13)).then(() => process.send('profile-stopped'));
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
