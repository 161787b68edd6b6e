// Test doubles for the gateway's integration tests: a fake upstream context, a fake identity-auth
// gRPC server, and an HTTPS client that trusts the gateway's CA. Not compiled into dist.
import { Server, experimental } from '@grpc/grpc-js';
import { type ContextName, internalCredentials, internalServerOptions } from '@ziti/service-kit';
import { createServer as createHttpsServer } from 'node:https';
import { ApiError, toGrpcError } from '@ziti/errors';
import { PRINCIPAL_HEADER, type RequestPrincipal, verifyPrincipal } from '@ziti/http-kit';
import { IdentityAuthServiceService } from '@ziti/proto';
import express from 'express';
import type { Server as HttpServer, IncomingHttpHeaders } from 'node:http';
import { request } from 'node:https';
import { randomUUID } from 'node:crypto';

export const SECRET = 'test-internal-secret';

export function testPrincipal(over: Partial<RequestPrincipal> = {}): RequestPrincipal {
  return {
    identityId: 'id-good', identityName: 'good', apiSessionId: 'as-good', isAdmin: false, isDefaultAdmin: false,
    isFullyAuthenticated: true, permissions: [], configTypes: [], authenticatorId: 'auth-1',
    expiresAt: new Date(Date.now() + 1800_000).toISOString(), expirationSeconds: 1800, identityTypeId: 'Default', ...over,
  };
}

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  principal?: RequestPrincipal;
  principalError?: string;
}

/** Holds a fake context's answers while closed (`close()` returns the opener). */
class Gate {
  private waiting?: Promise<void>;
  passed(): Promise<void> {
    return this.waiting ?? Promise.resolve();
  }
  close(): () => void {
    let release!: () => void;
    this.waiting = new Promise<void>((r) => (release = r));
    return () => {
      this.waiting = undefined;
      release();
    };
  }
}

/** Listens with a fake context's app on a loopback port; `gate()` holds its answers until the returned function is called. */
async function listenWithGate(app: express.Express, gate: Gate, as: ContextName = 'identity-auth'): Promise<{ url: string; gate(): () => void; close(): Promise<void> }> {
  // As a context listens: HTTPS with the internal identity of the context `as` (the gateway checks it names the context it calls).
  const server = await new Promise<HttpServer>((resolve) => {
    const s = createHttpsServer(internalServerOptions(internalCredentials(as)), app);
    s.listen(0, '127.0.0.1', () => resolve(s as unknown as HttpServer));
  });
  return {
    url: `https://127.0.0.1:${(server.address() as { port: number }).port}`,
    gate: () => gate.close(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An upstream context that records what reached it and verifies the signed principal. */
/** `as`: the context it stands for (its internal certificate), identity-auth by default. */
export async function startFakeUpstream(as: ContextName = 'identity-auth'): Promise<{ url: string; requests: Recorded[]; gate(): () => void; close(): Promise<void> }> {
  const requests: Recorded[] = [];
  const gate = new Gate();
  const app = express();
  app.use(express.raw({ type: () => true, limit: '5mb' }));
  app.use(async (req, res) => {
    const rec: Recorded = { method: req.method, url: req.url, headers: req.headers, body: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0) };
    const token = req.headers[PRINCIPAL_HEADER];
    if (typeof token === 'string') {
      try {
        rec.principal = verifyPrincipal(SECRET, token).principal;
      } catch (err) {
        rec.principalError = (err as Error).message;
      }
    }
    requests.push(rec);
    await gate.passed();
    res.setHeader('x-ziti-internal-debug', 'should not leak');
    res.json({ data: { upstream: true, path: req.url }, meta: {} });
  });
  return { ...(await listenWithGate(app, gate, as)), requests };
}

/**
 * identity-auth's gRPC service: tokens starting with `good` resolve; `bare` fails 401 without a challenge;
 * anything else fails 401 with the invalid-token challenge (as `toGrpcError` carries it).
 * OIDC access tokens (`accessToken`, recorded in `accessTokens`) resolve when their signature part
 * is `good` (the API session `as-oidc`), else fail 401 with the invalid bearer challenge.
 */
export async function startFakeIdentityAuth(): Promise<{ address: string; calls: string[]; bearerTokens: string[][]; accessTokens: string[]; close(): Promise<void> }> {
  const calls: string[] = [];
  const bearerTokens: string[][] = [];
  const accessTokens: string[] = [];
  const server = new Server();
  server.addService(IdentityAuthServiceService, {
    resolveApiSession: (call: { request: { token: string; bearerTokens: string[]; accessToken?: string } }, callback: (err: unknown, res?: unknown) => void) => {
      const { token, accessToken } = call.request;
      if (accessToken) {
        accessTokens.push(accessToken);
        if (accessToken.split('.')[2] === 'good') return callback(null, { principal: testPrincipal({ apiSessionId: 'as-oidc' }), cacheTtlSeconds: 30 });
        return callback(
          toGrpcError(
            ApiError.of('UNAUTHORIZED', { headers: { 'WWW-Authenticate': 'Bearer realm="openziti-oidc" error="invalid" error_description="token is invalid"' } }),
          ),
        );
      }
      calls.push(token);
      bearerTokens.push(call.request.bearerTokens);
      if (token.startsWith('good')) return callback(null, { principal: testPrincipal(), cacheTtlSeconds: 30 });
      if (token === 'bare') return callback(toGrpcError(ApiError.of('UNAUTHORIZED')));
      callback(
        toGrpcError(
          ApiError.of('UNAUTHORIZED', { headers: { 'WWW-Authenticate': 'zt-session realm="zt-session" error="invalid" error_description="token is invalid"' } }),
        ),
      );
    },
  } as never);
  const port: number = await new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', experimental.createCertificateProviderServerCredentials(internalCredentials('identity-auth'), internalCredentials('identity-auth'), true), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    address: `127.0.0.1:${port}`,
    calls,
    bearerTokens,
    accessTokens,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json: any;
}

export interface Call {
  method?: string;
  path: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  /** Send the body in chunks of this size without a content-length (chunked transfer coding). */
  chunkSize?: number;
  /** A client certificate (PEM, leaf first) and its key, presented in the TLS handshake. */
  clientCert?: { certPem: string; keyPem: string };
}

/** One HTTPS request to the gateway, trusting only its CA. Errors after the response are ignored. */
export function call(base: { port: number; caCertPem: string }, c: Call): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | string[]> = { ...(c.headers ?? {}) };
    if (c.body !== undefined && c.chunkSize === undefined) headers['content-length'] = String(Buffer.byteLength(c.body));
    let answered = false;
    const req = request(
      {
        host: '127.0.0.1', port: base.port, servername: 'localhost', ca: base.caCertPem, method: c.method ?? 'GET', path: c.path, headers, agent: false,
        ...(c.clientCert ? { cert: c.clientCert.certPem, key: c.clientCert.keyPem } : {}),
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode!, headers: res.headers, text, json });
        });
      },
    );
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    if (c.body !== undefined && c.chunkSize !== undefined) {
      const buf = Buffer.from(c.body);
      for (let i = 0; i < buf.length; i += c.chunkSize) req.write(buf.subarray(i, i + c.chunkSize));
      req.end();
    } else {
      req.end(c.body);
    }
  });
}

export interface FakeLogin {
  method: string;
  username?: string;
  /** The `x-forwarded-for` the context received. */
  forwardedFor?: string;
}

/**
 * identity-auth's `/authenticate` as far as the gateway's limits see it: password `right` → 200
 * with a new `zt-session` and the caller's address as `ipAddress`; anything else → 401
 * `INVALID_AUTH`. Records every login that reached it; `gate()` holds the answers.
 */
export async function startFakeLoginContext(): Promise<{ url: string; logins: FakeLogin[]; gate(): () => void; close(): Promise<void> }> {
  const logins: FakeLogin[] = [];
  const gate = new Gate();
  const app = express();
  app.use(express.json({ type: () => true }));
  app.use(async (req, res) => {
    const body = (req.body ?? {}) as { username?: string; password?: string };
    const forwardedFor = req.headers['x-forwarded-for'] as string | undefined;
    logins.push({ method: String(req.query.method), username: body.username, forwardedFor });
    await gate.passed();
    if (body.password !== 'right') {
      res.status(401).json({ error: { code: 'INVALID_AUTH', message: 'The authentication request failed', requestId: 'fake' }, meta: {} });
      return;
    }
    res.setHeader('zt-session', randomUUID());
    res.json({ data: { ipAddress: forwardedFor }, meta: {} });
  });
  return { ...(await listenWithGate(app, gate)), logins };
}
