/** Fields the pretty line shows in its head, or leaves out (pino's process fields). */
const HEAD = new Set(['time', 'level', 'context', 'msg', 'pid', 'hostname']);

function show(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

/** `Type: message (at <first frame>)` of a serialized error: the whole stack is what the JSON format is for. */
function showError(err: { type?: string; message?: string; stack?: string }): string {
  const frame = /\n\s+at (.+)/.exec(err.stack ?? '')?.[1];
  return JSON.stringify(`${err.type ?? 'Error'}: ${err.message ?? ''}${frame ? ` (at ${frame})` : ''}`);
}

/**
 * One JSON record as one readable terminal line:
 * `19:02:09.123 INFO  gateway request finished requestId=Xy3kLm9ab method=GET status=200`.
 */
export function formatPretty(record: Record<string, unknown>): string {
  const time = typeof record.time === 'string' ? record.time.slice(11, 23) : '';
  const level = String(record.level ?? '').toUpperCase().padEnd(5);
  const parts = [time, level, String(record.context ?? '-'), String(record.msg ?? '')];
  for (const [key, value] of Object.entries(record)) {
    if (HEAD.has(key) || value === undefined) continue;
    parts.push(`${key}=${key === 'err' && value && typeof value === 'object' ? showError(value as { type?: string }) : show(value)}`);
  }
  return `${parts.join(' ')}\n`;
}

/** A destination that writes each JSON line pino gives it as a pretty line to `out`. */
export function prettyDestination(out: { write(line: string): unknown }): { write(line: string): void } {
  return {
    write(line: string) {
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line) as Record<string, unknown>;
      } catch {
        out.write(line);
        return;
      }
      out.write(formatPretty(record));
    },
  };
}
