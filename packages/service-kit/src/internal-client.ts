import type { ChannelCredentials, ServiceDefinition } from '@grpc/grpc-js';
import { request } from 'node:https';
import { internalChannelCredentials, internalChannelOptions } from './in-process.js';
import { INTERNAL_RPC_CALLERS } from './internal-acl.js';
import { type ContextName, internalCredentials } from './internal-tls.js';

export interface InternalResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  raw: Buffer;
  /** The body parsed as JSON, or null when it is not JSON. */
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * One HTTPS request to an internal listener, as context `as` (its internal certificate) or with
 * no client certificate at all (`as: null`); the server is checked against the internal CA only.
 * For tests and probes of the internal plane, never on a hot path (a new connection each time).
 */
export function internalRequest(url: string, opts: { as: ContextName | null; method?: string; body?: string | Buffer; headers?: Record<string, string> }): Promise<InternalResponse> {
  const trust = internalCredentials(opts.as ?? 'gateway').tlsOptions();
  const identity = opts.as ? { cert: trust.cert, key: trust.key } : {};
  return new Promise((resolve, reject) => {
    // A body goes with its length (Node frames no body of a DELETE on its own), as fetch sends it.
    const headers = opts.body === undefined ? opts.headers : { 'content-length': String(Buffer.byteLength(opts.body)), ...opts.headers };
    const req = request(url, { method: opts.method ?? 'GET', agent: false, ca: trust.ca, ...identity, headers, checkServerIdentity: () => undefined }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        const text = raw.toString();
        let json: unknown = null;
        try {
          json = JSON.parse(text);
        } catch {
          json = null;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, raw, json });
      });
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/**
 * `fetch` for an internal listener, as context `as` (default the gateway, the one caller of the
 * contexts' HTTP ports): the same arguments, a standard `Response`. For tests.
 */
export async function internalFetch(url: string, init: { method?: string; headers?: Record<string, string> | Headers; body?: string | Buffer | null; redirect?: string } = {}, as: ContextName | null = 'gateway'): Promise<Response> {
  const headers = init.headers instanceof Headers ? Object.fromEntries(init.headers.entries()) : init.headers;
  const res = await internalRequest(url, { as, method: init.method, headers, body: init.body ?? undefined });
  const out = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) out.append(name, v);
  }
  const empty = res.status === 204 || res.status === 304 || (init.method ?? 'GET').toUpperCase() === 'HEAD';
  return new Response(empty ? null : res.raw, { status: res.status, headers: out });
}

type GrpcCtor<C> = { new (address: string, creds: ChannelCredentials, options?: object): C; service: ServiceDefinition };

/**
 * `internalTestClient` with promises: `call(method, req)` resolves with the answer and rejects with
 * the grpc-js error.
 */
export function internalRpc<C>(Ctor: GrpcCtor<C>, address: string, server: ContextName): { call<Res>(method: keyof C & string, req: object): Promise<Res>; close(): void } {
  const client = internalTestClient(Ctor, address, server) as unknown as Record<string, (r: object, cb: (e: Error | null, r: unknown) => void) => void> & { close(): void };
  return {
    call: <Res>(method: keyof C & string, req: object) =>
      new Promise<Res>((resolve, reject) => client[method]!.call(client, req, (e, r) => (e ? reject(e) : resolve(r as Res)))),
    close: () => client.close(),
  };
}

/**
 * A stand-in for a generated client of a context's gRPC service whose every method is called over
 * the network as the context `INTERNAL_RPC_CALLERS` allows first for it: for tests that exercise
 * RPCs of several callers with one object. Same methods and signatures as the generated client.
 */
export function internalTestClient<C>(Ctor: GrpcCtor<C>, address: string, server: ContextName): C {
  const clients = new Map<ContextName, C>();
  const clientFor = (caller: ContextName) => {
    let c = clients.get(caller);
    if (!c) clients.set(caller, (c = new Ctor(address, internalChannelCredentials(caller, server), internalChannelOptions(server))));
    return c as Record<string, (...args: unknown[]) => unknown>;
  };
  const out: Record<string, unknown> = { close: () => clients.forEach((c) => (c as { close(): void }).close()) };
  for (const [name, def] of Object.entries(Ctor.service)) {
    const caller = INTERNAL_RPC_CALLERS[def.path]?.[0] ?? 'gateway';
    const call = (...args: unknown[]) => {
      const c = clientFor(caller);
      return c[name]!.apply(c, args);
    };
    out[name] = call;
    if (def.originalName) out[def.originalName] = call;
  }
  return out as C;
}
