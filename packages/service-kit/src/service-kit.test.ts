import { Metadata, Server, type ServiceError, type UntypedServiceImplementation, experimental, status } from '@grpc/grpc-js';
import { spawnSync } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HealthServiceClient, type HealthServiceServer, HealthServiceService } from '@ziti/proto';
import { grpcClient, healthService, inProcessEnabled, intEnv, internalChannelCredentials, internalCredentials, internalRequest, listenHttp, localHttpApp, requireEnv, startGrpcServer } from './index.js';

describe('service-kit', () => {
  it('serves the health service over gRPC on an ephemeral port', async () => {
    let ready = false;
    const grpc = await startGrpcServer('127.0.0.1', 0, [healthService('demo', async () => ready)], 'policy');
    const client = new HealthServiceClient(grpc.address, internalChannelCredentials('gateway', 'policy'));
    const check = () =>
      new Promise<{ service: string; ready: boolean }>((res, rej) => client.check({}, (err, r) => (err ? rej(err) : res(r))));
    expect(await check()).toEqual({ service: 'demo', ready: false });
    ready = true;
    expect((await check()).ready).toBe(true);
    client.close();
    await grpc.stop();
  });

  const jsonApp = (req: IncomingMessage, res: ServerResponse) => {
    res.statusCode = req.url === '/x' ? 200 : 404;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ ok: req.url === '/x' }));
  };

  it('listens with a request listener and closes', async () => {
    const app = jsonApp;
    const http = await listenHttp(app, '127.0.0.1', 0, 'policy');
    expect(http.port).toBeGreaterThan(0);
    expect(http.url).toMatch(/^https:/);
    expect((await internalRequest(`${http.url}/x`, { as: 'gateway' })).json).toEqual({ ok: true });
    await http.close();
    await expect(internalRequest(`${http.url}/x`, { as: 'gateway' })).rejects.toThrow();
  });

  it('parses environment values and names the key when one is wrong', () => {
    expect(intEnv({}, 'P', 5)).toBe(5);
    expect(intEnv({ P: '80' }, 'P', 5)).toBe(80);
    expect(() => intEnv({ P: 'eighty' }, 'P', 5)).toThrow(/P must be an integer/);
    expect(() => requireEnv({}, 'DATABASE_URL')).toThrow(/DATABASE_URL is required/);
  });

  describe('co-located contexts', () => {
    // A health service whose answers the test controls, recording what its handler saw.
    function controlled(answer: (call: { request: unknown; getPeer(): string }, cb: (err: Partial<ServiceError> | null, v?: unknown) => void) => void) {
      const impl: HealthServiceServer = { check: (call, cb) => answer(call as never, cb as never) };
      return { definition: HealthServiceService, implementation: impl as unknown as UntypedServiceImplementation };
    }
    const check = (client: InstanceType<typeof HealthServiceClient>, deadlineMs = 5000) =>
      new Promise<{ service: string; ready: boolean }>((res, rej) =>
        client.check({}, new Metadata(), { deadline: Date.now() + deadlineMs }, (err, r) => (err ? rej(err) : res(r))),
      );

    it('calls a server of the same process directly, with the messages copied through their wire form', async () => {
      const seen: { request: unknown; peer: string }[] = [];
      const reply = { service: 'demo', ready: true };
      const grpc = await startGrpcServer('127.0.0.1', 0, [controlled((call, cb) => (seen.push({ request: call.request, peer: call.getPeer() }), cb(null, reply)))], 'policy');
      const client = grpcClient(HealthServiceClient, grpc.address, 'gateway', 'policy');
      const request = {};
      const answer = await new Promise<{ service: string; ready: boolean }>((res, rej) => client.check(request, (err, r) => (err ? rej(err) : res(r))));
      expect(answer).toEqual(reply);
      expect(answer).not.toBe(reply);
      expect(seen).toHaveLength(1);
      expect(seen[0]!.peer).toBe('in-process');
      expect(seen[0]!.request).not.toBe(request);
      client.close();
      await grpc.stop();
    });

    it('keeps an error\'s code, details and metadata, honours the deadline, and is UNAVAILABLE once the server stopped', async () => {
      let mode: 'fail' | 'hang' = 'fail';
      const md = new Metadata();
      md.set('ziti-error-code', 'NOT_FOUND');
      const grpc = await startGrpcServer('127.0.0.1', 0, [
        controlled((_call, cb) => (mode === 'fail' ? cb({ code: status.NOT_FOUND, details: 'no such thing', metadata: md }) : undefined)),
      ], 'policy');
      const client = grpcClient(HealthServiceClient, grpc.address, 'gateway', 'policy');
      await expect(check(client)).rejects.toMatchObject({ code: status.NOT_FOUND, details: 'no such thing' });
      await check(client).catch((err: ServiceError) => expect(err.metadata.get('ziti-error-code')).toEqual(['NOT_FOUND']));
      mode = 'hang';
      await expect(check(client, 50)).rejects.toMatchObject({ code: status.DEADLINE_EXCEEDED });
      await grpc.stop();
      await expect(check(client, 2000)).rejects.toMatchObject({ code: status.UNAVAILABLE });
      client.close();
    });

    it('goes over the network when no server of this process is registered at the address', async () => {
      // A plain grpc-js server (as another process would run, with policy's identity): not registered, so reached through its port.
      const server = new Server();
      const policy = internalCredentials('policy');
      const peers: string[] = [];
      const binding = controlled((call, cb) => (peers.push(call.getPeer()), cb(null, { service: 'remote', ready: true })));
      server.addService(binding.definition, binding.implementation);
      const port = await new Promise<number>((res, rej) => server.bindAsync('127.0.0.1:0', experimental.createCertificateProviderServerCredentials(policy, policy, true), (e, p) => (e ? rej(e) : res(p))));
      const client = grpcClient(HealthServiceClient, `127.0.0.1:${port}`, 'gateway', 'policy');
      expect(await check(client)).toEqual({ service: 'remote', ready: true });
      expect(peers[0]).toMatch(/^(ipv4:)?127\.0\.0\.1:\d+$/);
      client.close();
      server.forceShutdown();
    });

    it('registers nothing when ZITI_IN_PROCESS=off, so calls take the network', async () => {
      expect(inProcessEnabled({})).toBe(true);
      expect(inProcessEnabled({ ZITI_IN_PROCESS: 'off' })).toBe(false);
      process.env.ZITI_IN_PROCESS = 'off';
      try {
        const http = await listenHttp(jsonApp, '127.0.0.1', 0, 'policy');
        expect(localHttpApp(http.url)).toBeUndefined();
        await http.close();
        const peers: string[] = [];
        const grpc = await startGrpcServer('127.0.0.1', 0, [controlled((call, cb) => (peers.push(call.getPeer()), cb(null, { service: 'x', ready: true })))], 'policy');
        const client = grpcClient(HealthServiceClient, grpc.address, 'gateway', 'policy');
        await check(client);
        expect(peers[0]).not.toBe('in-process');
        client.close();
        await grpc.stop();
      } finally {
        delete process.env.ZITI_IN_PROCESS;
      }
    });

    it('registers a listening app under its URL until it closes', async () => {
      const app = (req: IncomingMessage, res: ServerResponse) => jsonApp(req, res);
      const http = await listenHttp(app, '127.0.0.1', 0, 'policy');
      expect(localHttpApp(http.url)).toBe(app);
      expect(localHttpApp(`${http.url}/`)).toBe(app);
      await http.close();
      expect(localHttpApp(http.url)).toBeUndefined();
    });
  });

  it('keeps a guarded process alive through an uncaught exception and an unhandled rejection, and logs both', () => {
    // A child process: the test runner guards its own process, so it could not tell.
    const script = `
      const { guardProcess } = require(${JSON.stringify(require.resolve('../dist/process.js'))});
      guardProcess((m, err) => console.log('LOGGED', m, err && err.message));
      setTimeout(() => { throw new Error('thrown outside any handler'); }, 1);
      Promise.reject(new Error('nobody handles this'));
      setTimeout(() => console.log('ALIVE'), 50);`;
    const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 10_000 });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('LOGGED uncaught exception');
    expect(run.stdout).toContain('thrown outside any handler');
    expect(run.stdout).toContain('LOGGED unhandled promise rejection');
    expect(run.stdout).toContain('nobody handles this');
    expect(run.stdout).toContain('ALIVE');
  });
});
