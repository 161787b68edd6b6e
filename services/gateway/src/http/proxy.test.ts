import { type IncomingMessage, type ServerResponse, createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type RequestPrincipal, handedOverPrincipal, readBody, readJsonBody, sendError, sendJson, verifyPrincipal } from '@ziti/http-kit';
import { createServer as createHttpsServer } from 'node:https';
import { internalCredentials, internalServerOptions, listenHttp, localHttpApp } from '@ziti/service-kit';
import { type ProxiedRequest, createUpstreamProxy, dispatchLocal, keepRepeatedHeaders } from './proxy.js';

const response = (rawHeaders: string[], headers: Record<string, string>) => ({ rawHeaders, headers }) as unknown as IncomingMessage;

describe('keepRepeatedHeaders', () => {
  it('gives a header the service sent twice back as two values, and leaves single ones alone', () => {
    const res = response(
      ['Content-Type', 'application/json', 'ziti-authenticator-extend-requested', 'true', 'ziti-authenticator-extend-requested', 'true'],
      { 'content-type': 'application/json', 'ziti-authenticator-extend-requested': 'true, true' },
    );
    keepRepeatedHeaders(res);
    expect(res.headers).toEqual({ 'content-type': 'application/json', 'ziti-authenticator-extend-requested': ['true', 'true'] });
  });

  it('never brings back an internal header that was removed', () => {
    const res = response(['x-ziti-principal', 'a', 'x-ziti-principal', 'b'], {});
    keepRepeatedHeaders(res);
    expect(res.headers).toEqual({});
  });
});

describe('a context in the same process', () => {
  const SECRET = 'proxy-test-secret';
  const caller = { identityId: 'id-1', identityName: 'one', apiSessionId: 'as-1', isAdmin: false } as RequestPrincipal;
  /** The caller as a context's app resolves it: handed over in-process, else from the signed header. */
  const callerOf = (req: IncomingMessage) => {
    const header = req.headers['x-ziti-principal'];
    return handedOverPrincipal(req) ?? (typeof header === 'string' ? verifyPrincipal(SECRET, header).principal : undefined);
  };

  // The upstream app: echoes what it received, parsed by the services' JSON body reader.
  const upstreamApp = () => (req: IncomingMessage, res: ServerResponse) => {
    readJsonBody(req).then(
      (body) => {
        res.setHeader('x-upstream', 'yes');
        res.statusCode = 201;
        sendJson(res, {
          method: req.method,
          url: req.url,
          body: body ?? null,
          contentLength: req.headers['content-length'] ?? null,
          transferEncoding: req.headers['transfer-encoding'] ?? null,
          forwardedFor: req.headers['x-forwarded-for'] ?? null,
          forwardedProto: req.headers['x-forwarded-proto'] ?? null,
          principal: callerOf(req)?.identityId ?? null,
          authorization: req.headersDistinct.authorization ?? null,
        });
      },
      (err: unknown) => sendError(res, err, 'test'),
    );
  };

  // A front server standing in for the gateway: buffers the body, then proxies or dispatches.
  async function front(handler: (req: ProxiedRequest, res: ServerResponse, principal: RequestPrincipal) => void) {
    const server = createServer((req: ProxiedRequest, res) => {
      readBody(req, 1 << 20).then((body) => {
        req.zitiBody = body;
        req.zitiRequestId = 'rid-1';
        req.url = `/edge/client/v1${req.url}`;
        handler(req, res, caller);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
  }

  const send = async (url: string, init: RequestInit) => {
    const r = await fetch(url, init);
    return { status: r.status, upstream: r.headers.get("x-upstream"), json: (await r.json()) as any };
  };

  it('answers exactly as the proxy does: method, path, body, length, forwarded headers and principal', async () => {
    // Not registered (plain listen): the proxy goes over the network.
    // A context's listener in another process: HTTPS with the session context's internal identity.
    const upstream = createHttpsServer(internalServerOptions(internalCredentials('session')), upstreamApp());
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const upstreamUrl = `https://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    expect(localHttpApp(upstreamUrl)).toBeUndefined();
    const proxy = createUpstreamProxy('session', upstreamUrl, SECRET, () => undefined);
    const viaProxy = await front((req, res, p) => proxy.handler(req, res, p));
    const direct = await front((req, res, p) => dispatchLocal(upstreamApp(), req, res, p));
    try {
      const cases: [string, RequestInit][] = [
        ['/sessions?x=1', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ serviceId: 'abc', type: 'Dial' }) }],
        ['/sessions', { method: 'GET' }],
        ['/sessions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"broken' }],
        ['/sessions', { method: 'DELETE', headers: { 'content-type': 'application/json' }, body: '' }],
      ];
      for (const [path, init] of cases) {
        const a = await send(`${viaProxy.url}${path}`, init);
        const b = await send(`${direct.url}${path}`, init);
        expect(b).toEqual(a);
      }
      const ok = await send(`${direct.url}/sessions?x=1`, cases[0]![1]);
      expect(ok).toMatchObject({ status: 201, upstream: 'yes', json: { method: 'POST', url: '/edge/client/v1/sessions?x=1', body: { serviceId: 'abc', type: 'Dial' } } });
      expect(ok.json).toMatchObject({ contentLength: '33', transferEncoding: null, forwardedFor: '127.0.0.1', forwardedProto: 'http', principal: 'id-1' });
      // Two Authorization lines (Node keeps the first in `headers`): the context sees both in `headersDistinct`, on both paths.
      const twice = async (url: string) =>
        new Promise<unknown>((resolve, reject) => {
          get(`${url}/sessions`, { headers: ['host', new URL(url).host, 'authorization', 'Bearer a', 'authorization', 'Bearer b'] as never }, (r) => {
            let text = '';
            r.on('data', (c: Buffer) => (text += c.toString()));
            r.on('end', () => (r.statusCode === 201 ? resolve(JSON.parse(text).authorization) : reject(new Error(`${r.statusCode} ${text}`))));
          }).on('error', reject);
        });
      expect(await twice(viaProxy.url)).toEqual(['Bearer a', 'Bearer b']);
      expect(await twice(direct.url)).toEqual(['Bearer a', 'Bearer b']);
      const bad = await send(`${direct.url}/sessions`, cases[2]![1]);
      expect(bad.status).toBe(400);
      expect(bad.json.error.code).toBe('COULD_NOT_PARSE_BODY');
    } finally {
      await viaProxy.close();
      await direct.close();
      proxy.close();
      await new Promise<void>((r) => upstream.close(() => r()));
    }
  });

  it('replaces the forwarding headers a caller sent with the one client address, on both paths', async () => {
    const echo = (req: IncomingMessage, res: ServerResponse) =>
      sendJson(res, Object.fromEntries(Object.entries(req.headers).filter(([k]) => k.startsWith('x-forwarded-') || k === 'forwarded' || k === 'x-real-ip')));
    const upstream = createHttpsServer(internalServerOptions(internalCredentials('session')), echo);
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const proxy = createUpstreamProxy('session', `https://127.0.0.1:${(upstream.address() as AddressInfo).port}`, SECRET, () => undefined);
    const withClient = (client?: string) => (req: ProxiedRequest) => {
      if (client) req.zitiClientAddress = client;
      return req;
    };
    const fronts = [
      await front((req, res, p) => proxy.handler(withClient()(req), res, p)),
      await front((req, res, p) => dispatchLocal(echo, withClient()(req), res, p)),
      await front((req, res, p) => proxy.handler(withClient('203.0.113.50')(req), res, p)),
      await front((req, res, p) => dispatchLocal(echo, withClient('203.0.113.50')(req), res, p)),
    ];
    const forged = {
      'x-forwarded-for': '198.51.100.66', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https',
      'x-forwarded-prefix': '/x', forwarded: 'for=198.51.100.66', 'x-real-ip': '198.51.100.66',
    };
    try {
      const seen = await Promise.all(fronts.map(async (f) => (await fetch(`${f.url}/sessions`, { headers: forged })).json()));
      for (const [i, headers] of seen.entries()) {
        expect(headers).toEqual({
          'x-forwarded-for': i < 2 ? '127.0.0.1' : '203.0.113.50',
          'x-forwarded-proto': 'http',
          'x-forwarded-port': expect.stringMatching(/^\d+$/),
          'x-forwarded-host': new URL(fronts[i]!.url).host,
        });
      }
    } finally {
      for (const f of fronts) await f.close();
      proxy.close();
      await new Promise<void>((r) => upstream.close(() => r()));
    }
  });

  it('proxies over the network once the context no longer listens in this process', async () => {
    const listener = await listenHttp(upstreamApp(), '127.0.0.1', 0, 'session');
    expect(localHttpApp(listener.url)).toBeDefined();
    await listener.close();
    expect(localHttpApp(listener.url)).toBeUndefined();
    const proxy = createUpstreamProxy('session', listener.url, SECRET, () => undefined);
    const server = await front((req, res) => proxy.handler(req, res));
    try {
      const r = await send(`${server.url}/sessions`, { method: 'GET' });
      // Nothing listens there any more: unreachable, not slow.
      expect(r.status).toBe(503);
      expect(r.json.error.code).toBe('SERVICE_UNAVAILABLE');
    } finally {
      await server.close();
      proxy.close();
    }
  });
});
