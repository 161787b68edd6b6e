import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { ApiError, errorEnvelope } from '@ziti/errors';
import { sendJson } from './http.js';
import { shortId } from './ids.js';
import { shutdownGraceMs } from './lifecycle.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * 503 `SERVICE_UNAVAILABLE` in the envelope with `connection: close`: the answer of a process that
 * is starting or stopping. An expected state, not a failure: nothing is logged (a log line per
 * refused request is what an outage must not produce).
 */
export function sendUnavailable(res: ServerResponse, requestId: string = shortId()): void {
  res.statusCode = 503;
  res.setHeader('connection', 'close');
  sendJson(res, errorEnvelope(ApiError.of('SERVICE_UNAVAILABLE'), requestId));
}

export interface Drain {
  /** The request listener to give the server: counts the requests in flight, and refuses new ones once draining. */
  listener(app: Listener): Listener;
  /** True once {@link close} was called. */
  draining(): boolean;
  /**
   * Drains the server, then closes it: from now on every new request (health and readiness
   * included) is answered 503 `SERVICE_UNAVAILABLE` in the envelope with `connection: close`;
   * the requests already in flight run to their end, for at most `graceMs` (default
   * `ZITI_SHUTDOWN_GRACE_SECONDS`); then the listener closes and the connections left are cut.
   * Resolves once the server is closed.
   */
  close(server: HttpServer | HttpsServer, graceMs?: number): Promise<void>;
}

/** Graceful shutdown of one HTTP(S) listener (a context's, the gateway's). */
export function createDrain(): Drain {
  let inFlight = 0;
  let draining = false;
  let idle: (() => void) | undefined;
  let closing: Promise<void> | undefined;
  return {
    listener(app) {
      return (req, res) => {
        if (draining) return sendUnavailable(res);
        inFlight++;
        let ended = false;
        const end = () => {
          if (ended) return;
          ended = true;
          inFlight--;
          if (inFlight === 0) idle?.();
        };
        res.once('finish', end);
        res.once('close', end);
        app(req, res);
      };
    },
    draining: () => draining,
    close(server, graceMs = shutdownGraceMs()) {
      closing ??= (async () => {
        draining = true;
        await new Promise<void>((resolve) => {
          if (inFlight === 0) return resolve();
          const timer = setTimeout(resolve, graceMs);
          idle = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
      })();
      return closing;
    },
  };
}
