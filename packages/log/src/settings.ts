/** The levels `ZITI_LOG_LEVEL` accepts, lowest first (`silent` logs nothing). */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** `json`: one JSON object per line (the default, for log shippers); `pretty`: one readable line per record, for a terminal. */
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LogSettings {
  level: LogLevel;
  format: LogFormat;
}

/** An unknown `ZITI_LOG_LEVEL` or `ZITI_LOG_FORMAT`: a start refused with its message alone (no stack: not a bug). */
export class LogSettingsError extends Error {
  override readonly name = 'LogSettingsError';
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, key: string, allowed: readonly T[], fallback: T): T {
  const raw = env[key]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if ((allowed as readonly string[]).includes(raw)) return raw as T;
  throw new LogSettingsError(`${key} must be one of ${allowed.join(', ')} (got ${JSON.stringify(env[key])})`);
}

/**
 * `ZITI_LOG_LEVEL` (default `info`) and `ZITI_LOG_FORMAT` (default `json`), case-insensitive. An
 * unknown value throws an error naming the setting and the values it takes: a start with a typo
 * fails instead of logging at a level nobody asked for.
 */
export function logSettings(env: NodeJS.ProcessEnv = process.env): LogSettings {
  return {
    level: oneOf(env, 'ZITI_LOG_LEVEL', LOG_LEVELS, 'info'),
    format: oneOf(env, 'ZITI_LOG_FORMAT', LOG_FORMATS, 'json'),
  };
}
