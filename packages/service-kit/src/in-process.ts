import {
  type ChannelCredentials,
  type ClientOptions,
  Metadata,
  type ServiceDefinition,
  type ServiceError,
  status as GrpcStatus,
  type UntypedServiceImplementation,
  experimental,
} from '@grpc/grpc-js';
import type { HttpApp } from '@ziti/http-kit';
import { currentRequestId } from '@ziti/log';
import { grpcClientDuration, secondsSince } from '@ziti/metrics';
import { performance } from 'node:perf_hooks';
import { INTERNAL_SERVICE_OWNERS } from './internal-acl.js';
import { type ContextName, expectServer, internalCredentials } from './internal-tls.js';

/**
 * Co-located contexts (the all-in-one controller runs every context in one process) call each other
 * without the network: a gRPC server or HTTP app registers itself under the address it listens on,
 * and a client created for that address in the same process reaches it directly. Separate processes
 * find nothing registered and use the network as before; nothing is configured either way.
 */

interface UnaryMethod {
  definition: ServiceDefinition[string];
  handler: (call: unknown, callback: (err: Partial<ServiceError> | null, value?: unknown) => void) => void;
}

const grpcServers = new Map<string, Map<string, UnaryMethod>>();
const httpApps = new Map<string, HttpApp>();

/**
 * `ZITI_IN_PROCESS=off` turns the shortcut off: nothing registers, so co-located contexts talk
 * over loopback HTTP and gRPC as separate processes do (to reproduce that shape on one host).
 */
export function inProcessEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.ZITI_IN_PROCESS !== 'off';
}

/** Registers the unary methods a gRPC server serves at `address`; returns the unregistration. */
export function registerGrpcServer(address: string, services: { definition: ServiceDefinition; implementation: UntypedServiceImplementation }[]): () => void {
  if (!inProcessEnabled()) return () => undefined;
  const methods = new Map<string, UnaryMethod>();
  for (const { definition, implementation } of services) {
    for (const [name, def] of Object.entries(definition)) {
      const handler = implementation[name] ?? (def.originalName ? implementation[def.originalName] : undefined);
      if (!handler || def.requestStream || def.responseStream) continue;
      methods.set(def.path, { definition: def, handler: handler as UnaryMethod['handler'] });
    }
  }
  grpcServers.set(address, methods);
  return () => {
    if (grpcServers.get(address) === methods) grpcServers.delete(address);
  };
}

/** Registers the HTTP app listening at `url` (`http://host:port`); returns the unregistration. */
export function registerHttpApp(url: string, app: HttpApp): () => void {
  if (!inProcessEnabled()) return () => undefined;
  httpApps.set(url, app);
  return () => {
    if (httpApps.get(url) === app) httpApps.delete(url);
  };
}

/** The app listening at `url` in this process, if any. */
export function localHttpApp(url: string): HttpApp | undefined {
  return httpApps.get(url.replace(/\/+$/, ''));
}

/**
 * Where an in-process call carries its caller's context (a symbol: nothing from the network can
 * set it); the server's access check reads it as it reads a peer certificate over the network.
 */
export const IN_PROCESS_CALLER = Symbol('ziti.in-process-caller');

/** The metadata key that carries the id of the request a gRPC call serves, from caller to callee. */
export const REQUEST_ID_METADATA = 'x-request-id';

/**
 * A call's arguments (after the request) with the current request's id in its metadata: a copy of
 * the metadata given (the caller's object is left alone), or new metadata put first.
 */
function withRequestId(args: unknown[]): unknown[] {
  const requestId = currentRequestId();
  if (requestId === undefined) return args;
  const at = args.findIndex((a) => a instanceof Metadata);
  const metadata = at >= 0 ? (args[at] as Metadata).clone() : new Metadata();
  metadata.set(REQUEST_ID_METADATA, requestId);
  return at >= 0 ? args.map((a, i) => (i === at ? metadata : a)) : [metadata, ...args];
}

type GrpcClientConstructor<C> = {
  new (address: string, creds: ChannelCredentials, options?: Partial<ClientOptions>): C;
  service: ServiceDefinition;
};

function serviceError(code: GrpcStatus, details: string, metadata = new Metadata()): ServiceError {
  return Object.assign(new Error(`${code} ${GrpcStatus[code]}: ${details}`), { code, details, metadata });
}

/**
 * A unary call to a server of this process. The request and the answer are serialised and
 * deserialised as on the wire (so the callee and the caller never share objects and see the same
 * defaults), the deadline is honoured, errors keep their code, details and metadata, and a server
 * that stopped answers UNAVAILABLE as a closed port would.
 */
function callLocal(
  address: string,
  path: string,
  request: unknown,
  metadata: Metadata | undefined,
  deadline: number | undefined,
  callback: (err: ServiceError | null, value?: unknown) => void,
  caller: ContextName,
): void {
  const method = grpcServers.get(address)?.get(path);
  if (!method) {
    queueMicrotask(() => callback(serviceError(GrpcStatus.UNAVAILABLE, `no connection established to ${address}`)));
    return;
  }
  const def = method.definition;
  let done = false;
  let timer: NodeJS.Timeout | undefined;
  const finish = (err: ServiceError | null, value?: unknown) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    callback(err, value);
  };
  if (deadline !== undefined && Number.isFinite(deadline)) {
    timer = setTimeout(() => finish(serviceError(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded')), Math.max(0, deadline - Date.now()));
  }
  let decoded: unknown;
  try {
    decoded = def.requestDeserialize(def.requestSerialize(request));
  } catch (err) {
    queueMicrotask(() => finish(serviceError(GrpcStatus.INTERNAL, `request serialization failure: ${(err as Error).message}`)));
    return;
  }
  const call = {
    request: decoded,
    metadata: metadata ?? new Metadata(),
    cancelled: false,
    getPeer: () => 'in-process',
    getDeadline: () => deadline ?? Infinity,
    [IN_PROCESS_CALLER]: caller,
  };
  queueMicrotask(() => {
    try {
      method.handler(call, (err, value) => {
        if (err) {
          const code = typeof err.code === 'number' ? err.code : GrpcStatus.UNKNOWN;
          return finish(serviceError(code, err.details ?? err.message ?? '', err.metadata ?? new Metadata()));
        }
        try {
          finish(null, def.responseDeserialize(def.responseSerialize(value)));
        } catch (e) {
          finish(serviceError(GrpcStatus.INTERNAL, `response serialization failure: ${(e as Error).message}`));
        }
      });
    } catch (err) {
      finish(serviceError(GrpcStatus.UNKNOWN, (err as Error).message));
    }
  });
}

/**
 * The channel credentials of `caller` for a server of context `server`: mutual TLS with the
 * caller's internal identity, trusting only the internal CA, and the server's certificate must name
 * `server` (whatever address was dialled).
 */
export function internalChannelCredentials(caller: ContextName, server: ContextName): ChannelCredentials {
  const creds = internalCredentials(caller);
  return experimental.createCertificateProviderChannelCredentials(creds, creds, { checkServerIdentity: expectServer(server) });
}

/**
 * The channel options of a client of `server`: the TLS server name is that context (an address is
 * no valid SNI name; the server is checked by its certificate, `internalChannelCredentials`).
 */
export function internalChannelOptions(server: ContextName): Partial<ClientOptions> {
  // Answers may be large (the router data model of a big network is several MiB): 64 MiB, not grpc-js's 4.
  return { 'grpc.ssl_target_name_override': server, 'grpc.max_receive_message_length': INTERNAL_MAX_MESSAGE_BYTES };
}

/** The largest internal gRPC answer a client accepts. */
export const INTERNAL_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** The context that serves a generated client's service (its package-qualified name). */
function ownerOf(service: ServiceDefinition): ContextName | undefined {
  const path = Object.values(service)[0]?.path ?? '';
  return INTERNAL_SERVICE_OWNERS[path.slice(1, path.lastIndexOf('/'))];
}

/**
 * A client of a generated gRPC service for `address`, calling as context `context`: calls go to
 * the server of this process when one is registered there at the time of the call, else over the
 * network (mutual TLS with `context`'s internal identity, created on first need; the server must
 * prove it is `server`, by default the context that owns the service, which services served by
 * every context (health, maintenance, integrity) must name). A unary call made while a request is served carries its id in the
 * `x-request-id` metadata, either way. The object has the generated client's methods and `close()`; streaming
 * methods always use the network.
 * Example: `grpcClient(PolicyServiceClient, '127.0.0.1:18203').getServiceAccess(req, md, { deadline }, cb)`.
 */
export function grpcClient<C>(Ctor: GrpcClientConstructor<C>, address: string, context: ContextName, server?: ContextName): C {
  const expected = server ?? ownerOf(Ctor.service);
  if (!expected) throw new Error(`grpcClient: name the context that serves ${Ctor.name} at ${address}`);
  let remote: (C & { close(): void }) | undefined;
  const network = () => (remote ??= new Ctor(address, internalChannelCredentials(context, expected), internalChannelOptions(expected)) as C & { close(): void });
  const client: Record<string, unknown> = {
    close: () => remote?.close(),
  };
  for (const [name, def] of Object.entries(Ctor.service)) {
    // Streaming calls (the database snapshot's) always go over the network: they carry bulk data
    // and are rare, so the in-process shortcut serves only unary calls.
    if (def.requestStream || def.responseStream) {
      client[name] = (...args: unknown[]) => (network() as unknown as Record<string, (...a: unknown[]) => unknown>)[name]!.call(remote, ...args);
      continue;
    }
    const method = def.path;
    client[name] = (request: unknown, ...args: unknown[]) => {
      // The call's status and latency (ziti_grpc_client_handling_seconds), recorded when the callback runs.
      const startedAt = performance.now();
      const rest = withRequestId(args).map((a) =>
        typeof a === 'function'
          ? (err: ServiceError | null, value?: unknown) => {
              grpcClientDuration.observe({ context, method, code: String(err ? (typeof err.code === 'number' ? err.code : GrpcStatus.UNKNOWN) : 0) }, secondsSince(startedAt));
              (a as (err: ServiceError | null, value?: unknown) => void)(err, value);
            }
          : a,
      );
      if (!grpcServers.has(address)) {
        const fn = (network() as unknown as Record<string, (...a: unknown[]) => unknown>)[name]!;
        return fn.call(remote, request, ...rest);
      }
      const callback = rest.find((a) => typeof a === 'function') as (err: ServiceError | null, value?: unknown) => void;
      const options = rest.find((a) => a !== callback && !(a instanceof Metadata) && typeof a === 'object' && a !== null) as { deadline?: number | Date } | undefined;
      const deadline = options?.deadline instanceof Date ? options.deadline.getTime() : options?.deadline;
      const metadata = rest.find((a) => a instanceof Metadata) as Metadata | undefined;
      callLocal(address, def.path, request, metadata, deadline, callback, context);
      return undefined;
    };
  }
  return client as C;
}
