// Structured JSON logs of every process: pino with the request context, redaction and the
// `ZITI_LOG_LEVEL` / `ZITI_LOG_FORMAT` settings.
export { LOG_FORMATS, LOG_LEVELS, LogSettingsError, type LogFormat, type LogLevel, type LogSettings, logSettings } from './settings.js';
export { type LogDestination, type Logger, type LoggingOptions, configureLogging, lineLogger, logger, problemLogger } from './logger.js';
export { type RequestContext, acceptRequestId, currentRequest, currentRequestId, runWithRequest } from './request-context.js';
export { REDACTED, REDACT_PATHS, scrubSecrets } from './redact.js';
export { formatPretty } from './pretty.js';
