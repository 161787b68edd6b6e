/**
 * Runs `stop` once on SIGTERM or SIGINT, then exits. For `main.ts` of every service.
 * A second signal exits at once.
 */
export function onShutdown(stop: () => Promise<void>, log: (m: string) => void = console.log): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log(`${signal} received, shutting down`);
    stop()
      .then(() => process.exit(0))
      .catch((err) => {
        console.error(err);
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => handler('SIGTERM'));
  process.on('SIGINT', () => handler('SIGINT'));
}

/** Reads a required environment variable, failing fast with its name. */
export function requireEnv(env: NodeJS.ProcessEnv, key: string): string {
  const v = env[key];
  if (v === undefined || v === '') throw new Error(`configuration: ${key} is required`);
  return v;
}

/** Reads an optional integer environment variable within bounds, failing fast with its name. */
export function intEnv(env: NodeJS.ProcessEnv, key: string, fallback: number, min = 0, max = 65535): number {
  const raw = env[key];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`configuration: ${key} must be an integer in ${min}..${max}, got "${raw}"`);
  return n;
}
