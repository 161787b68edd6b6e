import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { openBalancers, READINESS } from './balancer.js';
import { freePort } from './own-servers.js';

/** The Service emulation: connections go round robin to ready replicas only; none ready, none accepted. */

interface Replica {
  name: string;
  ready: boolean;
  port: number;
  close(): Promise<void>;
}

async function replica(name: string, ready: boolean): Promise<Replica> {
  const r = { name, ready } as Replica;
  const server = http.createServer((req, res) => {
    res.statusCode = req.url === '/readyz' && !r.ready ? 503 : 200;
    res.setHeader('connection', 'close');
    res.end(name);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  r.port = (server.address() as AddressInfo).port;
  r.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return r;
}

/** Who answered a request through the balancer, or the transport error. */
function via(port: number): Promise<string> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve(body));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

async function eventually(probe: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10 * READINESS.periodMs * READINESS.failureThreshold;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('openBalancers', () => {
  it('spreads connections over the ready replicas only, following their readiness', async () => {
    const [a, b] = [await replica('a', true), await replica('b', false)];
    const port = await freePort();
    const balancers = await openBalancers([{ listenPort: port, backends: [a, b].map((r) => ({ port: r.port, readyzPort: r.port })) }]);
    try {
      await eventually(async () => (await via(port)) === 'a', 'a to be ready');
      const first = await Promise.all([via(port), via(port), via(port), via(port)]);
      expect(first).toEqual(['a', 'a', 'a', 'a']);

      b.ready = true;
      await eventually(async () => new Set(await Promise.all([via(port), via(port), via(port), via(port)])).size === 2, 'both replicas to answer');

      a.ready = false;
      b.ready = false;
      await eventually(async () => (await via(port)) === 'ECONNRESET', 'connections to be refused with no replica ready');
    } finally {
      await balancers.close();
      await a.close();
      await b.close();
    }
  });
});
