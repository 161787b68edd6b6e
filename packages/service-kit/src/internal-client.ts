import { request } from 'node:https';
import { type ContextName, internalCredentials } from './internal-tls.js';

export interface InternalResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON, or null when it is not JSON. */
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * One HTTPS request to an internal listener, as context `as` (its internal certificate) or with
 * no client certificate at all (`as: null`); the server is checked against the internal CA only.
 * For tests and probes of the internal plane, never on a hot path (a new connection each time).
 */
export function internalRequest(url: string, opts: { as: ContextName | null; method?: string; body?: string; headers?: Record<string, string> }): Promise<InternalResponse> {
  const trust = internalCredentials(opts.as ?? 'gateway').tlsOptions();
  const identity = opts.as ? { cert: trust.cert, key: trust.key } : {};
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', agent: false, ca: trust.ca, ...identity, headers: opts.headers, checkServerIdentity: () => undefined }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let json: unknown = null;
        try {
          json = JSON.parse(text);
        } catch {
          json = null;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}
