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

let guarded = false;

/**
 * Keeps one request's unexpected failure from ending the process that serves every other request:
 * a promise rejection nobody handled, or an exception thrown outside any handler (in a library's
 * callback, say), is logged with its stack and the process goes on. The request it belonged to
 * gets its answer from its own error path or its timeout. For `main.ts` of every service and of
 * the all-in-one controller; installing it twice is a no-op.
 */
export function guardProcess(log: (message: string, err: unknown) => void = (m, err) => console.error(m, err)): void {
  if (guarded) return;
  guarded = true;
  process.on('unhandledRejection', (reason) => log('unhandled promise rejection (the process goes on):', reason));
  process.on('uncaughtException', (err, origin) => log(`uncaught exception in ${origin} (the process goes on):`, err));
}

/** Reads a required environment variable, failing fast with its name. */
export function requireEnv(env: NodeJS.ProcessEnv, key: string): string {
  const v = env[key];
  if (v === undefined || v === '') throw new Error(`configuration: ${key} is required`);
  return v;
}

/** Reads an optional boolean environment variable: true/1/yes/on or false/0/no/off (any case); unset or empty = `fallback`. */
export function boolEnv(env: NodeJS.ProcessEnv, key: string, fallback: boolean): boolean {
  const raw = env[key]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw new Error(`configuration: ${key} must be true or false (on or off), got "${env[key]}"`);
}

/** Reads an optional integer environment variable within bounds, failing fast with its name. */
export function intEnv(env: NodeJS.ProcessEnv, key: string, fallback: number, min = 0, max = 65535): number {
  const raw = env[key];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`configuration: ${key} must be an integer in ${min}..${max}, got "${raw}"`);
  return n;
}
