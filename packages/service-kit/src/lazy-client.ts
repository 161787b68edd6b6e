import { type Client, Metadata, type ServiceError } from '@grpc/grpc-js';
import { ApiError, fromGrpcError } from '@ziti/errors';

/** A gRPC address, or a function giving it once known (the all-in-one controller starts the contexts one by one). */
export type Address = string | (() => string | undefined);

/** A unary method of a ts-proto grpc-js client, as `call` invokes it. */
export type Unary<Req, Res> = (req: Req, md: Metadata, opts: { deadline: number }, cb: (err: ServiceError | null, res: Res) => void) => unknown;

export interface LazyClient<C> {
  /** Calls one unary method; rejects with the ApiError the callee sent (`fromGrpcError`). */
  call<Req, Res>(pick: (c: C) => Unary<Req, Res>, req: Req): Promise<Res>;
  close(): void;
}

/**
 * One client per peer, created on the first call (the address may be known only then); an unknown
 * address rejects with TIMEOUT rather than throwing. Each call has a deadline (default 5 s).
 */
export function lazyGrpcClient<C extends Client>(name: string, address: Address | undefined, make: (addr: string) => C, deadlineMs = 5000): LazyClient<C> {
  let client: C | undefined;
  return {
    call<Req, Res>(pick: (c: C) => Unary<Req, Res>, req: Req): Promise<Res> {
      return new Promise<Res>((resolve, reject) => {
        if (!client) {
          const addr = typeof address === 'function' ? address() : address;
          if (!addr) return reject(ApiError.of('TIMEOUT', { cause: { code: 'UNHANDLED', message: `${name} address unknown` } }));
          client = make(addr);
        }
        const c = client;
        pick(c).call(c, req, new Metadata(), { deadline: Date.now() + deadlineMs }, (err, res) => (err ? reject(fromGrpcError(err)) : resolve(res)));
      });
    },
    close() {
      client?.close();
    },
  };
}
