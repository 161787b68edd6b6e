import { type Metadata, Server, type ServiceDefinition, type UntypedServiceImplementation, experimental, status as GrpcStatus } from '@grpc/grpc-js';
import { type Logger, acceptRequestId, logger, runWithRequest } from '@ziti/log';
import { grpcServerDuration, secondsSince } from '@ziti/metrics';
import { processShuttingDown } from '@ziti/http-kit';
import { HealthServiceService, type HealthServiceServer } from '@ziti/proto';
import { performance } from 'node:perf_hooks';
import { IN_PROCESS_CALLER, REQUEST_ID_METADATA, registerGrpcServer } from './in-process.js';
import { mayCall } from './internal-acl.js';
import { type ContextName, internalCredentials, isContextName, peerContext } from './internal-tls.js';

export interface GrpcServiceBinding {
  definition: ServiceDefinition;
  implementation: UntypedServiceImplementation;
}

export interface GrpcListener {
  address: string;
  port: number;
  stop(): Promise<void>;
}

/** The HealthService every context serves: not ready once the process began to shut down. */
export function healthService(name: string, ready: () => Promise<boolean> = async () => true): GrpcServiceBinding {
  const impl: HealthServiceServer = {
    check: (_call, callback) => {
      (processShuttingDown() ? Promise.resolve(false) : ready())
        .catch(() => false)
        .then((ok) => callback(null, { service: name, ready: ok }));
    },
  };
  return { definition: HealthServiceService, implementation: impl as unknown as UntypedServiceImplementation };
}

/**
 * Starts the gRPC server of context `context` with the given services, over mutual TLS with the
 * context's internal identity (`internalCredentials`): a caller without a certificate of the
 * internal CA never gets past the handshake, and each call is refused with PERMISSION_DENIED
 * unless `INTERNAL_RPC_CALLERS` lets the caller's context call that method. Clients of the same
 * process made with `grpcClient` reach it without the network, under the same rule.
 */
export function startGrpcServer(host: string, port: number, bindings: GrpcServiceBinding[], context: ContextName): Promise<GrpcListener> {
  const creds = internalCredentials(context);
  const server = new Server({ 'grpc.keepalive_permit_without_calls': 1 });
  const services = bindings.map((b) => instrumented(authorised(b), context));
  for (const s of services) server.addService(s.definition, s.implementation);
  return new Promise((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, experimental.createCertificateProviderServerCredentials(creds, creds, true), (err, actual) => {
      if (err) return reject(err);
      const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
      const address = `${shownHost}:${actual}`;
      const unregister = registerGrpcServer(address, services);
      resolve({
        address,
        port: actual,
        stop: () =>
          new Promise<void>((res) => {
            unregister();
            const force = setTimeout(() => server.forceShutdown(), 5_000);
            force.unref();
            server.tryShutdown(() => {
              clearTimeout(force);
              res();
            });
          }),
      });
    });
  });
}

type Callback = (err: { code?: number } | null, value?: unknown, ...rest: unknown[]) => void;

/** The context a call comes from: its verified client certificate, or the in-process caller. */
export function callerOf(call: unknown): ContextName | undefined {
  const local = (call as Record<symbol, unknown>)[IN_PROCESS_CALLER];
  if (local !== undefined) return isContextName(local) ? local : undefined;
  const auth = (call as { getAuthContext?: () => { sslPeerCertificate?: Parameters<typeof peerContext>[0] } | null }).getAuthContext?.();
  return peerContext(auth?.sslPeerCertificate);
}

const refusal = (path: string, caller: ContextName | undefined) =>
  Object.assign(new Error(caller ? `${caller} may not call ${path}` : `no internal identity for ${path}`), {
    code: caller ? GrpcStatus.PERMISSION_DENIED : GrpcStatus.UNAUTHENTICATED,
    details: caller ? `${caller} may not call ${path}` : 'an internal identity is required',
  });

/**
 * The binding with every method (unary and streaming) guarded by `INTERNAL_RPC_CALLERS`: a caller
 * the table does not name for the method gets PERMISSION_DENIED (UNAUTHENTICATED without an
 * identity) before the handler runs.
 */
function authorised(binding: GrpcServiceBinding): GrpcServiceBinding {
  const implementation: UntypedServiceImplementation = { ...binding.implementation };
  for (const [name, def] of Object.entries(binding.definition)) {
    const key = binding.implementation[name] ? name : def.originalName && binding.implementation[def.originalName] ? def.originalName : undefined;
    if (!key) continue;
    const handler = binding.implementation[key] as unknown as (call: unknown, callback?: Callback) => void;
    implementation[key] = ((call: { emit?: (e: string, err: Error) => void; destroy?: (err: Error) => void }, callback?: Callback) => {
      const caller = callerOf(call);
      if (mayCall(caller, def.path)) return handler(call, callback);
      const err = refusal(def.path, caller);
      if (callback) return callback(err);
      // A streaming call without a callback: end it with the status.
      (call as unknown as { destroy(e: Error): void; emit(e: string, x: unknown): void }).emit('error', err);
    }) as unknown as UntypedServiceImplementation[string];
  }
  return { definition: binding.definition, implementation };
}

/** The request id a call's metadata carries (`x-request-id`), when well-formed. */
function requestIdOf(call: unknown): string | undefined {
  const metadata = (call as { metadata?: Metadata }).metadata;
  return metadata ? acceptRequestId(metadata.get(REQUEST_ID_METADATA)[0]) : undefined;
}

/** The debug line of a handled call (with the caller's request id, from the context it ran in). */
function logCall(log: Logger, method: string, code: number, startedAt: number): void {
  log.debug({ grpcMethod: method, grpcCode: code, latencyMs: Math.round((performance.now() - startedAt) * 10) / 10 }, 'grpc call handled');
}

/**
 * The binding with every unary handler timed: `ziti_grpc_server_handling_seconds` by full method
 * and status code (0 = OK). A handler runs in the request context of the caller's request id
 * (`x-request-id` metadata, sent by `grpcClient`), so its log lines carry it; each call is logged
 * at debug level. Streaming handlers are served as they are (rare bulk transfers).
 */
function instrumented(binding: GrpcServiceBinding, context: string): GrpcServiceBinding {
  const log = logger(context);
  const implementation: UntypedServiceImplementation = { ...binding.implementation };
  for (const [name, def] of Object.entries(binding.definition)) {
    if (def.requestStream || def.responseStream) continue;
    const key = binding.implementation[name] ? name : def.originalName && binding.implementation[def.originalName] ? def.originalName : undefined;
    if (!key) continue;
    const handler = binding.implementation[key] as unknown as (call: unknown, callback: Callback) => void;
    const method = def.path;
    implementation[key] = ((call: unknown, callback: Callback) => {
      const startedAt = performance.now();
      const serve = () =>
        handler(call, (err, ...rest) => {
          const code = err ? (typeof err.code === 'number' ? err.code : 2) : 0;
          grpcServerDuration.observe({ context, method, code: String(code) }, secondsSince(startedAt));
          if (log.isLevelEnabled('debug')) logCall(log, method, code, startedAt);
          callback(err, ...rest);
        });
      const requestId = requestIdOf(call);
      if (requestId === undefined) serve();
      else runWithRequest({ requestId }, serve);
    }) as unknown as UntypedServiceImplementation[string];
  }
  return { definition: binding.definition, implementation };
}
