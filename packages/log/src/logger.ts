import pino from 'pino';
import { REDACTED, REDACT_PATHS, redactNested, scrubSecrets } from './redact.js';
import { currentRequest } from './request-context.js';
import { prettyDestination } from './pretty.js';
import { type LogFormat, type LogLevel, logSettings } from './settings.js';

/**
 * The process's structured log: JSON lines on stdout by default (`ZITI_LOG_FORMAT`,
 * `ZITI_LOG_LEVEL`), each with `level` (its name), `time` (ISO-8601), `context` (the bounded context
 * or `controller`), `msg`, the current request's `requestId`/`operationId`/`identityId`, and
 * secrets redacted (`redact.ts`).
 *
 * Loggers are made once per module (`const log = logger('gateway')`) and may be made before the
 * process configures its logging: each follows the configuration of the moment it logs.
 */

/** Where log lines go: anything with `write(line)` (stdout, a file stream, a test's collector). */
export interface LogDestination {
  write(line: string): unknown;
}

export interface LoggingOptions {
  /** Default `ZITI_LOG_LEVEL` (else `info`). */
  level?: LogLevel;
  /** Default `ZITI_LOG_FORMAT` (else `json`). */
  format?: LogFormat;
  /** Default stdout (synchronous writes: a line logged just before a crash is not lost). */
  destination?: LogDestination;
}

/** The log methods of a context's logger (pino's signatures: `log.info('text')`, `log.error({ err }, 'text')`). */
export interface Logger {
  /** The `context` of its lines. */
  readonly context: string;
  trace: pino.LogFn;
  debug: pino.LogFn;
  info: pino.LogFn;
  warn: pino.LogFn;
  error: pino.LogFn;
  fatal: pino.LogFn;
  /** True when a line of `level` would be written (to skip building an expensive one). */
  isLevelEnabled(level: LogLevel): boolean;
}

const METHODS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;

/** The request fields every line carries while a request is served (pino merges the call's own fields over them). */
function requestFields(): Record<string, string> {
  const request = currentRequest();
  if (!request) return {};
  const fields: Record<string, string> = { requestId: request.requestId };
  if (request.operationId !== undefined) fields.operationId = request.operationId;
  if (request.identityId !== undefined) fields.identityId = request.identityId;
  return fields;
}

/** pino's error serializer (type, message, stack, own fields) with secrets cut out of the text. */
function serializeError(err: unknown): unknown {
  if (typeof err === 'string') return scrubSecrets(err);
  if (!(err instanceof Error)) return err;
  const out = pino.stdSerializers.err(err);
  out.message = scrubSecrets(out.message);
  if (typeof out.stack === 'string') out.stack = scrubSecrets(out.stack);
  return out;
}

function build(options: LoggingOptions): pino.Logger {
  const settings = options.level && options.format ? { level: options.level, format: options.format } : { ...logSettings(), ...dropUndefined(options) };
  const out: LogDestination = options.destination ?? pino.destination({ dest: 1, sync: true });
  const stream = settings.format === 'pretty' ? prettyDestination(out) : out;
  return pino(
    {
      level: settings.level,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }), log: redactNested },
      serializers: { err: serializeError },
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      mixin: requestFields,
      hooks: {
        // Messages are free text: whatever secret they quote is cut out (fields are redacted by path).
        logMethod(args, method) {
          for (let i = 0; i < args.length; i++) if (typeof args[i] === 'string') args[i] = scrubSecrets(args[i] as string);
          method.apply(this, args as Parameters<pino.LogFn>);
        },
      },
    },
    stream as pino.DestinationStream,
  );
}

function dropUndefined(options: LoggingOptions): Partial<LoggingOptions> {
  const out: Partial<LoggingOptions> = {};
  if (options.level !== undefined) out.level = options.level;
  if (options.format !== undefined) out.format = options.format;
  return out;
}

let root: pino.Logger | undefined;
let generation = 0;

/**
 * The root logger; until the process configures it, one from the environment (or, when a setting
 * there is unknown, the defaults: a log call never throws; `configureLogging` is what fails).
 */
function currentRoot(): pino.Logger {
  if (root) return root;
  try {
    root = build({});
  } catch (err) {
    root = build({ level: 'info', format: 'json' });
    root.warn(`${(err as Error).message}: logging at info, as JSON`);
  }
  return root;
}

/**
 * Sets up the process's log (level, format, destination); options left out come from the
 * environment. A process's entry point calls it first: an unknown `ZITI_LOG_LEVEL` or
 * `ZITI_LOG_FORMAT` then fails the start with the setting's name. Loggers made earlier follow.
 */
export function configureLogging(options: LoggingOptions = {}): void {
  root = build(options);
  generation++;
}

class ContextLogger implements Logger {
  private made = -1;
  private child!: pino.Logger;
  readonly trace!: pino.LogFn;
  readonly debug!: pino.LogFn;
  readonly info!: pino.LogFn;
  readonly warn!: pino.LogFn;
  readonly error!: pino.LogFn;
  readonly fatal!: pino.LogFn;

  constructor(readonly context: string) {
    for (const method of METHODS) {
      (this as Record<string, unknown>)[method] = (...args: unknown[]) => (this.current()[method] as (...a: unknown[]) => void)(...args);
    }
  }

  isLevelEnabled(level: LogLevel): boolean {
    return this.current().isLevelEnabled(level);
  }

  private current(): pino.Logger {
    if (this.made !== generation || !root) {
      this.child = currentRoot().child({ context: this.context });
      this.made = generation;
    }
    return this.child;
  }
}

/** The logger of a context (`gateway`, `identity-auth`, …, `controller` for the all-in-one's own lines). */
export function logger(context: string): Logger {
  return new ContextLogger(context);
}

/** The wording of a text line that reports something going wrong (`… failed`, `… unavailable`, `dropping …`). */
const TROUBLE = /\b(failed|failure|unavailable|not reachable|lost|dropping|refused)\b/i;

/**
 * A `(message) => void` callback writing to `log`, for the code that takes one (the services'
 * `log` options). Its lines are records like any other: at `level` when one is given; else at
 * warn when the text reports trouble (`SyncIdentity failed`, `identity-auth unavailable`), at info
 * otherwise. Those messages name their context first (`policy: …`), which the line's `context`
 * field now says: that prefix is dropped.
 */
export function lineLogger(log: Logger, level?: Exclude<LogLevel, 'silent'>): (message: string) => void {
  const prefix = `${log.context}: `;
  return (message) => {
    const text = message.startsWith(prefix) ? message.slice(prefix.length) : message;
    log[level ?? (TROUBLE.test(text) ? 'warn' : 'info')](text);
  };
}

/**
 * A `(message, err?) => void` callback (the messaging kit's `log` options: the outbox relay, the
 * buses): a line with an error at error level, the error as `err` (type, message, stack); one
 * without at warn.
 */
export function problemLogger(log: Logger): (message: string, err?: unknown) => void {
  return (message, err) => (err === undefined ? log.warn(message) : log.error({ err }, message));
}
