import { Server, ServerCredentials, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { processShuttingDown } from '@ziti/http-kit';
import { HealthServiceService, type HealthServiceServer } from '@ziti/proto';
import { registerGrpcServer } from './in-process.js';

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
 * Starts a plaintext gRPC server (inside the cluster network) with the given services. Clients of
 * the same process made with `grpcClient` reach it without the network.
 */
export function startGrpcServer(host: string, port: number, services: GrpcServiceBinding[]): Promise<GrpcListener> {
  const server = new Server({ 'grpc.keepalive_permit_without_calls': 1 });
  for (const s of services) server.addService(s.definition, s.implementation);
  return new Promise((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (err, actual) => {
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
