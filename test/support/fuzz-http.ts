import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import tls from 'node:tls';

/**
 * The fuzz suite's HTTPS client. Unlike `http.ts` it sends exactly the bytes it is given: the
 * request target is not re-encoded (`%00`, `..`, `%2F` reach the server as written), bodies are raw
 * buffers (invalid UTF-8, BOMs, truncated JSON), and header values that Node's client refuses to
 * send (control characters, bytes of a lone surrogate) go over a raw TLS socket. It keeps
 * connections alive, never throws for a status, and reports a connection that ended without an
 * answer as `error` instead of throwing.
 */

export interface FuzzRequest {
  method: string;
  /** Request target as sent: path and query, already percent-encoded as intended. */
  target: string;
  /** Header values Node's client accepts; `content-type` defaults to application/json when a body is sent. */
  headers?: Record<string, string>;
  /** Extra header lines as raw bytes (each without CRLF); the request then goes over a raw socket. */
  rawHeaderLines?: Buffer[];
  body?: Buffer;
}

export interface FuzzResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The parsed body when it is JSON, else undefined. */
  json: unknown;
  ms: number;
  /** Set when no complete answer arrived (reset, hang-up, timeout). */
  error?: string;
}

const TIMEOUT_MS = 20_000;

export class FuzzHttp {
  private readonly agent: https.Agent;
  private readonly url: URL;

  constructor(
    baseUrl: string,
    private readonly caCertPem: string,
  ) {
    this.url = new URL(baseUrl);
    this.agent = new https.Agent({ ca: caCertPem, keepAlive: true, maxSockets: 4 });
  }

  send(req: FuzzRequest, token?: string): Promise<FuzzResponse> {
    const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
    if (token !== undefined) headers['zt-session'] = token;
    if (req.body !== undefined) headers['content-type'] ??= 'application/json';
    return req.rawHeaderLines?.length ? this.sendRaw(req, headers) : this.sendHttps(req, headers);
  }

  private sendHttps(req: FuzzRequest, headers: Record<string, string>): Promise<FuzzResponse> {
    const started = Date.now();
    return new Promise((resolve) => {
      let settled = false;
      const done = (r: Omit<FuzzResponse, 'ms'>) => {
        if (settled) return;
        settled = true;
        resolve({ ...r, ms: Date.now() - started });
      };
      const all: Record<string, string | number> = { ...headers };
      if (req.body !== undefined) all['content-length'] = req.body.length;
      let r: ReturnType<typeof https.request>;
      try {
        r = https.request({ host: this.url.hostname, port: this.url.port, method: req.method, path: req.target, headers: all, agent: this.agent, timeout: TIMEOUT_MS }, (res) => {
          const parts: Buffer[] = [];
          res.on('data', (c: Buffer) => parts.push(c));
          res.on('error', (e) => done({ status: 0, headers: {}, text: '', json: undefined, error: `response error: ${e.message}` }));
          res.on('end', () => {
            const text = Buffer.concat(parts).toString('utf8');
            done({ status: res.statusCode ?? 0, headers: res.headers, text, json: parseJson(res.headers, text) });
          });
        });
      } catch (e) {
        // The request could not even be formed by Node (a bug of the input catalogue, not the server).
        throw new Error(`fuzz input not sendable by node:https (${req.method} ${req.target}): ${(e as Error).message}`);
      }
      r.on('timeout', () => r.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
      r.on('error', (e) => done({ status: 0, headers: {}, text: '', json: undefined, error: `connection error: ${e.message}` }));
      r.end(req.body);
    });
  }

  /** One request on its own TLS connection, written byte for byte, `connection: close`. */
  private sendRaw(req: FuzzRequest, headers: Record<string, string>): Promise<FuzzResponse> {
    const started = Date.now();
    const lines: Buffer[] = [Buffer.from(`${req.method} ${req.target} HTTP/1.1\r\nhost: ${this.url.host}\r\nconnection: close\r\n`, 'latin1')];
    for (const [k, v] of Object.entries(headers)) lines.push(Buffer.from(`${k}: ${v}\r\n`, 'latin1'));
    for (const l of req.rawHeaderLines ?? []) lines.push(l, Buffer.from('\r\n'));
    lines.push(Buffer.from(`content-length: ${req.body?.length ?? 0}\r\n\r\n`));
    if (req.body) lines.push(req.body);
    return new Promise((resolve) => {
      const parts: Buffer[] = [];
      let settled = false;
      const finish = (error?: string) => {
        if (settled) return;
        settled = true;
        const parsed = parseRawResponse(Buffer.concat(parts));
        resolve({ ...parsed, ms: Date.now() - started, ...(parsed.status === 0 ? { error: error ?? 'no HTTP answer' } : {}) });
      };
      // Written without half-closing: the server answers, then closes (`connection: close`).
      const socket = tls.connect({ host: this.url.hostname, port: Number(this.url.port), ca: this.caCertPem }, () => socket.write(Buffer.concat(lines)));
      socket.setTimeout(TIMEOUT_MS, () => socket.destroy(new Error('timeout')));
      socket.on('data', (c: Buffer) => parts.push(c));
      socket.on('end', () => finish());
      socket.on('close', () => finish());
      socket.on('error', (e) => finish(`connection error: ${e.message}`));
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

function parseJson(headers: IncomingHttpHeaders, text: string): unknown {
  if (!/json/i.test(String(headers['content-type'] ?? '')) || text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A minimal HTTP/1.1 response parser for the raw path (content-length, chunked or close-delimited). */
function parseRawResponse(buf: Buffer): Omit<FuzzResponse, 'ms'> {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return { status: 0, headers: {}, text: buf.toString('latin1'), json: undefined };
  const head = buf.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '')?.[1] ?? 0);
  const headers: IncomingHttpHeaders = {};
  for (const line of head.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let body = buf.subarray(end + 4);
  if (/chunked/i.test(String(headers['transfer-encoding'] ?? ''))) body = dechunk(body);
  else if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']));
  const text = body.toString('utf8');
  return { status, headers, text, json: parseJson(headers, text) };
}

function dechunk(buf: Buffer): Buffer {
  const out: Buffer[] = [];
  let i = 0;
  while (i < buf.length) {
    const eol = buf.indexOf('\r\n', i);
    if (eol < 0) break;
    const size = parseInt(buf.subarray(i, eol).toString('latin1'), 16);
    if (!size) break;
    out.push(buf.subarray(eol + 2, eol + 2 + size));
    i = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}
