const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * A UTC instant as Go's `time.Time.String()` prints it (the `expires-at` header's format):
 * `2006-01-02 15:04:05.999999999 -0700 MST`, i.e. `2026-01-02 15:04:05.123 +0000 UTC`.
 * The fraction drops trailing zeros and disappears when it is zero.
 */
export function formatGoTime(d: Date): string {
  const date = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  const ms = d.getUTCMilliseconds();
  const fraction = ms === 0 ? '' : `.${pad(ms, 3).replace(/0+$/, '')}`;
  return `${date} ${time}${fraction} +0000 UTC`;
}
