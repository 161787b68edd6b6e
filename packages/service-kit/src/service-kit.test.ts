import { credentials } from '@grpc/grpc-js';
import express from 'express';
import { HealthServiceClient } from '@ziti/proto';
import { healthService, intEnv, listenHttp, requireEnv, startGrpcServer } from './index.js';

describe('service-kit', () => {
  it('serves the health service over gRPC on an ephemeral port', async () => {
    let ready = false;
    const grpc = await startGrpcServer('127.0.0.1', 0, [healthService('demo', async () => ready)]);
    const client = new HealthServiceClient(grpc.address, credentials.createInsecure());
    const check = () =>
      new Promise<{ service: string; ready: boolean }>((res, rej) => client.check({}, (err, r) => (err ? rej(err) : res(r))));
    expect(await check()).toEqual({ service: 'demo', ready: false });
    ready = true;
    expect((await check()).ready).toBe(true);
    client.close();
    await grpc.stop();
  });

  it('listens with an express app and closes', async () => {
    const app = express();
    app.get('/x', (_req, res) => void res.json({ ok: true }));
    const http = await listenHttp(app, '127.0.0.1', 0);
    expect(http.port).toBeGreaterThan(0);
    expect(await (await fetch(`${http.url}/x`)).json()).toEqual({ ok: true });
    await http.close();
    await expect(fetch(`${http.url}/x`)).rejects.toThrow();
  });

  it('parses environment values and names the key when one is wrong', () => {
    expect(intEnv({}, 'P', 5)).toBe(5);
    expect(intEnv({ P: '80' }, 'P', 5)).toBe(80);
    expect(() => intEnv({ P: 'eighty' }, 'P', 5)).toThrow(/P must be an integer/);
    expect(() => requireEnv({}, 'DATABASE_URL')).toThrow(/DATABASE_URL is required/);
  });
});
