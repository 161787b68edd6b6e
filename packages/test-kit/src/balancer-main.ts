import { type BalancedPort, openBalancers } from './balancer.js';

// The process of `startOwnBalancers`: the ports as JSON in argv[2]; prints one line once listening;
// ends on SIGTERM or when its parent goes (the IPC channel closes).
async function main(): Promise<void> {
  const balancers = await openBalancers(JSON.parse(process.argv[2] ?? '[]') as BalancedPort[]);
  const end = () => void balancers.close().finally(() => process.exit(0));
  process.once('SIGTERM', end);
  process.once('disconnect', end);
  process.stdout.write('listening\n');
}

main().catch((err: unknown) => {
  console.error('balancers not started:', err);
  process.exit(1);
});
