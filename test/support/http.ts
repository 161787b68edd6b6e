import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { checkReceived, specStatus } from './spec-validator.js';

/** One HTTP exchange as the suite sees it. Never thrown for 4xx/5xx. */
export interface HttpResponse<T = any> {
  status: number;
  headers: IncomingHttpHeaders;
  /** Header names and values as sent, alternating (`res.rawHeaders`). */
  rawHeaders: string[];
  /** The parsed JSON body when the content type is JSON (and it parses), else undefined. */
  body: T;
  text: string;
  method: string;
  path: string;
}

export interface RequestOptions {
  method?: string;
  /** Path and query, e.g. `/edge/management/v1/identities?limit=5`. */
  path: string;
  headers?: Record<string, string | string[]>;
  /** JSON-serialised and sent with `content-type: application/json`. */
  json?: unknown;
  /** Sent as is (with `content-length`). */
  raw?: string | Buffer;
  /** Sent with `transfer-encoding: chunked`, one write per chunk. */
  chunks?: Buffer[];
  /** The `zt-session` header. */
  token?: string;
  /**
   * A client certificate (PEM chain, leaf first) and its private key (PEM) presented in the TLS
   * handshake (mTLS). Sent on a fresh connection without TLS session reuse.
   */
  clientCert?: { certPem: string; keyPem: string };
  /** Validate the body against the swagger spec (default true). */
  validate?: boolean;
}

/**
 * Collects swagger conformance problems of every response the suite receives; `conformance.ts`
 * turns them into test failures after each test.
 */
export const conformanceProblems: string[] = [];

/** A tiny HTTPS client bound to one controller, trusting only its CA. */
export class HttpClient {
  private readonly agent: https.Agent;

  constructor(
    readonly baseUrl: string,
    readonly caCertPem: string,
  ) {
    this.agent = new https.Agent({ ca: caCertPem, keepAlive: false });
  }

  get(path: string, token?: string, headers?: Record<string, string>): Promise<HttpResponse> {
    return this.request({ method: 'GET', path, token, headers });
  }

  post(path: string, json?: unknown, token?: string): Promise<HttpResponse> {
    return this.request({ method: 'POST', path, json, token });
  }

  request<T = any>(opts: RequestOptions): Promise<HttpResponse<T>> {
    const method = (opts.method ?? 'GET').toUpperCase();
    const url = new URL(this.baseUrl);
    const headers: Record<string, string | string[] | number> = { accept: 'application/json', ...opts.headers };
    if (opts.token !== undefined) headers['zt-session'] = opts.token;
    let payload: Buffer | undefined;
    if (opts.json !== undefined) {
      payload = Buffer.from(JSON.stringify(opts.json));
      headers['content-type'] ??= 'application/json';
    } else if (opts.raw !== undefined) {
      payload = Buffer.isBuffer(opts.raw) ? opts.raw : Buffer.from(opts.raw);
      headers['content-type'] ??= 'application/json';
    }
    if (payload) headers['content-length'] = payload.length;
    if (opts.chunks) {
      headers['transfer-encoding'] = 'chunked';
      headers['content-type'] ??= 'application/json';
    }

    return new Promise<HttpResponse<T>>((resolve, reject) => {
      let answered = false;
      const agent = opts.clientCert
        ? new https.Agent({ ca: this.caCertPem, cert: opts.clientCert.certPem, key: opts.clientCert.keyPem, keepAlive: false, maxCachedSessions: 0 })
        : this.agent;
      const req = https.request(
        { host: url.hostname, port: url.port, method, path: opts.path, headers: headers as any, agent },
        (res) => {
          answered = true;
          const parts: Buffer[] = [];
          res.on('data', (c: Buffer) => parts.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(parts).toString('utf8');
            const out: HttpResponse<T> = { status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, text, body: parseJson(res.headers, text), method, path: opts.path };
            if (opts.validate !== false) recordConformance(out, String(headers.accept));
            resolve(out);
          });
        },
      );
      // A server may answer (e.g. 413) and close before the whole body is written: once a
      // response arrived, write errors are expected and ignored.
      req.on('error', (err) => {
        if (!answered) reject(err);
      });
      if (opts.chunks) {
        writeChunks(req, opts.chunks);
      } else {
        req.end(payload);
      }
    });
  }

  /** Every value of one header as sent (separate header lines stay separate). */
  static headerLines(res: HttpResponse, name: string): string[] {
    const out: string[] = [];
    for (let i = 0; i < res.rawHeaders.length; i += 2) if (res.rawHeaders[i].toLowerCase() === name.toLowerCase()) out.push(res.rawHeaders[i + 1]);
    return out;
  }

  close(): void {
    this.agent.destroy();
  }
}

function writeChunks(req: import('node:http').ClientRequest, chunks: Buffer[]): void {
  let i = 0;
  const next = () => {
    if (req.destroyed) return;
    if (i >= chunks.length) {
      req.end();
      return;
    }
    const ok = req.write(chunks[i++]);
    if (ok) setImmediate(next);
    else req.once('drain', next);
  };
  next();
}

function parseJson(headers: IncomingHttpHeaders, text: string): any {
  const ct = String(headers['content-type'] ?? '');
  if (!/json/i.test(ct) || text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function recordConformance(res: HttpResponse, accept: string): void {
  if (res.method === 'OPTIONS' || res.method === 'HEAD') return;
  const ct = String(res.headers['content-type'] ?? '');
  if (!/json/i.test(ct)) {
    if (/json|\*\/\*/i.test(accept) && specStatus().checked) {
      conformanceProblems.push(`${res.method} ${res.path} → ${res.status}: content-type "${ct}", expected application/json`);
    }
    return;
  }
  const problems = checkReceived(res.method, res.path, res.status, res.body);
  for (const p of problems) conformanceProblems.push(`${res.method} ${res.path}: ${p}`);
}
