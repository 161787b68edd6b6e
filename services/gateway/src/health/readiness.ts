import { Metadata, type ServiceError } from '@grpc/grpc-js';
import { dependencies, describeFailure } from '@ziti/errors';
import { type HealthCheckResponse, HealthServiceClient } from '@ziti/proto';
import { type ContextName, grpcClient } from '@ziti/service-kit';

/** Default interval of the readiness poll of the contexts. */
export const READINESS_POLL_MS = 1_000;
/** While a context is not ready (starting, or its dependency away), it is polled this often: its return shows at once. */
export const NOT_READY_POLL_MS = 100;

export interface ContextReadiness {
  /** True while every context answered ready on its last poll. Read per probe: no call is made. */
  ready(): boolean;
  /** The contexts that did not answer ready on their last poll (none known yet counts as not ready). */
  notReady(): string[];
  /** One poll of every context now; resolves when all have answered or failed. */
  poll(): Promise<void>;
  stop(): void;
}

/**
 * Polls each context's `HealthService` in the background (every `intervalMs`, each call bounded
 * by the same), so that the gateway's readiness says whether every context can serve without a
 * fan-out per probe. A context answers not ready while its own dependencies (its database) are
 * down or it drains; one that cannot be reached counts the same. Each change is reported to
 * `dependencies` as `context <name>`: one line when it stops serving, one when it is back (with
 * the requests that failed on it meanwhile, counted by the proxy).
 */
export function watchContextReadiness(contexts: Partial<Record<ContextName, string>>, intervalMs = READINESS_POLL_MS): ContextReadiness {
  const entries = (Object.entries(contexts) as [ContextName, string][]).filter(([, address]) => address).map(([name, address]) => ({
    name,
    client: grpcClient(HealthServiceClient, address, 'gateway', name),
    ready: false,
  }));
  let stopped = false;
  let running: Promise<void> | undefined;

  function check(entry: (typeof entries)[number]): Promise<void> {
    return new Promise<void>((resolve) => {
      entry.client.check({}, new Metadata(), { deadline: Date.now() + intervalMs }, (err: ServiceError | null, res?: HealthCheckResponse) => {
        const ready = !err && res?.ready === true;
        const key = `context ${entry.name}`;
        if (ready) dependencies.up(key);
        else dependencies.lost(key, err ? describeFailure(err) : 'its health check answers not ready');
        entry.ready = ready;
        resolve();
      });
    });
  }

  let timer: NodeJS.Timeout | undefined;
  /** The next poll: soon while a context is not ready (its return shows at once), else after the interval. */
  const schedule = () => {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void poll(), entries.every((e) => e.ready) ? intervalMs : Math.min(intervalMs, NOT_READY_POLL_MS));
    timer.unref();
  };

  function poll(): Promise<void> {
    running ??= Promise.all(entries.map(check)).then(() => {
      running = undefined;
      schedule();
    });
    return running;
  }
  schedule();

  return {
    ready: () => entries.every((e) => e.ready),
    notReady: () => entries.filter((e) => !e.ready).map((e) => e.name),
    poll,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      for (const e of entries) e.client.close();
    },
  };
}
