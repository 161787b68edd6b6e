/**
 * The process's shutdown state, shared by every listener and readiness check of the process (the
 * gateway and all contexts in the all-in-one controller): once a shutdown began, readiness answers
 * not-ready everywhere at once, before any listener has started to drain.
 */
const state = { draining: false, graceMs: 20_000 };

/** Default of `ZITI_SHUTDOWN_GRACE_SECONDS`: in-flight requests get this long once shutdown began. */
export const DEFAULT_SHUTDOWN_GRACE_SECONDS = 20;

/** Marks the process as shutting down: every readiness check answers not-ready from now on. */
export function beginProcessShutdown(): void {
  state.draining = true;
}

/** True once the process began to shut down (SIGTERM/SIGINT through `onShutdown`). */
export function processShuttingDown(): boolean {
  return state.draining;
}

/** How long a listener lets its in-flight requests run once it drains. */
export function shutdownGraceMs(): number {
  return state.graceMs;
}

/** Sets the grace of {@link shutdownGraceMs} (`ZITI_SHUTDOWN_GRACE_SECONDS`, read by each `main`). */
export function setShutdownGraceMs(ms: number): void {
  state.graceMs = ms;
}
