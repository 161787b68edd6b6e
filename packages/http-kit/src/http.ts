import { type IncomingMessage, STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { ApiError, dependencies, describeFailure, errorEnvelope, toApiError } from '@ziti/errors';
import { type Logger, logger } from '@ziti/log';
import iconv from 'iconv-lite';
import { headerValue } from './header-value.js';
import type { RequestPrincipal } from './principal.js';

/**
 * The plain Node.js request/response layer of every HTTP app here (the gateway and each context):
 * a request listener, JSON bodies read with the limits and error codes of the Edge API, and
 * responses written with the headers clients have always received.
 */
export type HttpApp = (req: IncomingMessage, res: ServerResponse) => void;

/** Maximum request body, as the controller's `api.MaxRequestBodySize`. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Deepest nesting of arrays and objects a JSON body may have (Ruby's and Rack's default
 * `max_nesting`). No body of either API comes near it; a deeper one is refused before it is
 * parsed, so it never builds an object graph or reaches a recursive walk.
 */
export const MAX_JSON_DEPTH = 100;

const tooDeep = () => ApiError.of('COULD_NOT_PARSE_BODY', { cause: { code: 'UNHANDLED', message: `JSON nested deeper than ${MAX_JSON_DEPTH} levels` } });

/**
 * True when JSON text (a string, or its UTF-8 bytes) nests arrays and objects deeper than `max`
 * (brackets inside strings do not count).
 */
export function jsonNestsDeeperThan(text: string | Uint8Array, max: number): boolean {
  if (text.length <= max) return false;
  const at = typeof text === 'string' ? (i: number) => text.charCodeAt(i) : (i: number) => text[i]!;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = at(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * A request handed over inside one process (the gateway to a co-located context) carries the body
 * the gateway already buffered under this symbol, so it is not read from the stream a second time.
 * A symbol cannot arrive over the network.
 */
const BUFFERED_BODY = Symbol.for('ziti.buffered-body');

/**
 * The caller of a request handed over inside one process: the gateway authenticated it and passes
 * the principal itself, where over the network it signs it into the principal header.
 */
const HANDED_OVER_PRINCIPAL = Symbol.for('ziti.handed-over-principal');

type HandedOver = IncomingMessage & { [BUFFERED_BODY]?: Buffer; [HANDED_OVER_PRINCIPAL]?: RequestPrincipal };

/** Attaches the already-buffered body of a request handed over in-process. */
export function attachBufferedBody(req: IncomingMessage, body: Buffer): void {
  (req as HandedOver)[BUFFERED_BODY] = body;
}

/** Attaches the gateway's principal to a request handed over in-process (a copy: the callee owns it). */
export function attachPrincipal(req: IncomingMessage, principal: RequestPrincipal): void {
  (req as HandedOver)[HANDED_OVER_PRINCIPAL] = { ...principal };
}

/** The principal a request was handed over with, if it was. */
export function handedOverPrincipal(req: IncomingMessage): RequestPrincipal | undefined {
  return (req as HandedOver)[HANDED_OVER_PRINCIPAL];
}

const UNLIMITED_LIMIT = /"limit":9223372036854776000\b/g;

/**
 * JSON text of a body. The "unlimited" page size is 2^63-1 on the wire, which a JS number cannot
 * hold exactly (it stringifies as 9223372036854776000); the pagination `limit` is written exactly.
 */
export function jsonText(body: unknown): string {
  const text = JSON.stringify(body);
  return text.includes('"limit":9223372036854776000') ? text.replace(UNLIMITED_LIMIT, '"limit":9223372036854775807') : text;
}

/** `type` with `charset=utf-8` (replacing a charset it had), as a text body is sent. */
export function withUtf8Charset(type: string): string {
  const semi = type.indexOf(';');
  if (semi < 0) return `${type}; charset=utf-8`;
  const params = type
    .slice(semi + 1)
    .split(';')
    .map((p) => p.trim())
    .filter((p) => p.length > 0 && !/^charset\s*=/i.test(p));
  return [type.slice(0, semi).trim(), ...params, 'charset=utf-8'].join('; ');
}

/**
 * Ends the response with `chunk`: `content-type` (a text body always says `charset=utf-8`) and
 * `content-length` are set; a 204 or 304 goes out without body or content headers.
 */
export function sendBody(res: ServerResponse, chunk: string | Buffer, contentType: string): void {
  const status = res.statusCode;
  if (status === 204 || status === 304) {
    res.removeHeader('content-type');
    res.removeHeader('content-length');
    res.removeHeader('transfer-encoding');
    res.end();
    return;
  }
  const text = typeof chunk === 'string';
  res.setHeader('content-type', text ? withUtf8Charset(contentType) : contentType);
  if (!res.hasHeader('transfer-encoding')) res.setHeader('content-length', text ? Buffer.byteLength(chunk) : chunk.length);
  res.end(chunk);
}

/** Ends the response with `body` as JSON. */
export function sendJson(res: ServerResponse, body: unknown): void {
  sendBody(res, jsonText(body), 'application/json');
}

/** Where the kit's lines go when the caller names no context's log. */
const kitLog = logger('http');

/**
 * Sends an error in the OpenZiti envelope (status, its headers, and the body with `requestId`).
 * A server error (5xx) is logged to `log` (the serving context's) with the request id and
 * everything known about it; its body carries only its code, message and the request id (see
 * `errorEnvelope`). A 503 for a dependency that is down is not logged per request: the process's
 * `dependencies` monitor counts it and logs the outage once. Never throws: a response that cannot
 * be written is destroyed.
 */
export function sendError(res: ServerResponse, err: unknown, requestId: string, log: Logger = kitLog): void {
  const apiErr = toApiError(err);
  if (apiErr.dependency) dependencies.failed(apiErr.dependency, describeFailure(err));
  // A dependency that is down is reported once per outage (`dependencies`), not per request.
  else if (apiErr.status >= 500 && apiErr.code !== 'SERVICE_UNAVAILABLE') logServerError(log, requestId, apiErr, err);
  try {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.statusCode = apiErr.status;
    for (const [k, v] of Object.entries(apiErr.headers)) res.setHeader(k, headerValue(String(v)));
    sendJson(res, errorEnvelope(apiErr, requestId));
  } catch (writeErr) {
    log.error({ requestId, err: writeErr }, 'writing the error response failed');
    res.destroy();
  }
}

/** The log line of a server error: the request id, the status, the code, the cause and the original error (with its stack). */
function logServerError(log: Logger, requestId: string, apiErr: ApiError, original: unknown): void {
  log.error({ requestId, status: apiErr.status, code: apiErr.code, cause: apiErr.cause, err: original }, `${apiErr.status} ${apiErr.code}`);
}

/**
 * A server's `clientError` handler: a request Node's parser refuses before any app sees it (a NUL
 * or a line break in a header, a malformed request line, headers too large, a request too slow)
 * is answered in the OpenZiti envelope (400, 431 or 408) instead of a bare status line, and the
 * connection is closed. Nothing of the parser's text is sent.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex, requestId: string): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const body = jsonText(errorEnvelope(ApiError.fromCode('COULD_NOT_VALIDATE', { status }), requestId));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** True when the request says it has a body (`transfer-encoding`, or a numeric `content-length`, even 0). */
export function hasBody(req: IncomingMessage): boolean {
  const len = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (len !== undefined && len.trim() !== '' && !Number.isNaN(Number(len)));
}

/** The media type of the request (`type/subtype`, lower case) without parameters, or undefined. */
export function mediaTypeOf(req: IncomingMessage): string | undefined {
  const ct = req.headers['content-type'];
  if (typeof ct !== 'string') return undefined;
  const semi = ct.indexOf(';');
  const type = (semi < 0 ? ct : ct.slice(0, semi)).trim().toLowerCase();
  return type.length > 0 ? type : undefined;
}

/** `application/json` or `application/<anything>+json`. */
export function isJsonMediaType(type: string | undefined): boolean {
  return type === 'application/json' || (type !== undefined && /^application\/[^/\s]+\+json$/.test(type));
}

function charsetOf(req: IncomingMessage): string {
  const m = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(req.headers['content-type'] ?? '');
  return (m?.[1] ?? 'utf-8').toLowerCase();
}

function unsupportedMediaType(message: string): ApiError {
  return ApiError.of('COULD_NOT_VALIDATE', { status: 415, cause: { code: 'UNHANDLED', message } } as never);
}

function tooLarge(): ApiError {
  return ApiError.of('REQUEST_ENTITY_TOO_LARGE');
}

/**
 * Buffers a request body of at most `limit` bytes, whatever its framing (`content-length` or
 * chunked). A declared length above the limit fails at once, without reading; a stream that grows
 * past it fails as soon as it does. After a failure the rest of the body is drained and discarded,
 * so that the client can read the 413 before the connection closes.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    req.resume();
    return Promise.reject(tooLarge());
  }
  // A declared length is read straight into one buffer of that size: a large body costs one copy,
  // not its chunks and then their concatenation.
  const length = declared !== undefined && /^\d+$/.test(declared.trim()) ? Number(declared) : undefined;
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const whole = length !== undefined && length > 0 ? Buffer.allocUnsafe(length) : undefined;
    let size = 0;
    let failed = false;
    const onData = (chunk: Buffer) => {
      if (failed) return;
      if (size + chunk.length > (whole ? whole.length : limit)) {
        failed = true;
        chunks.length = 0;
        reject(whole ? ApiError.of('COULD_NOT_READ_BODY', { cause: { code: 'UNHANDLED', message: 'body longer than its content-length' } }) : tooLarge());
        return;
      }
      if (whole) chunk.copy(whole, size);
      else chunks.push(chunk);
      size += chunk.length;
    };
    const onEnd = () => {
      cleanup();
      if (failed) return;
      if (whole) resolve(size === whole.length ? whole : whole.subarray(0, size));
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      if (!failed) reject(ApiError.of('COULD_NOT_READ_BODY', { cause: { code: 'UNHANDLED', message: err.message } }));
    };
    const onAborted = () => onError(new Error('request aborted'));
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      if (failed) req.resume();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}

function decompress(body: Buffer, encoding: string, limit: number): Buffer {
  const opts = { maxOutputLength: limit };
  try {
    switch (encoding) {
      case 'identity':
        return body;
      case 'gzip':
      case 'x-gzip':
        return gunzipSync(body, opts);
      case 'deflate':
        return inflateSync(body, opts);
      case 'br':
        return brotliDecompressSync(body, opts);
      default:
        throw unsupportedMediaType(`unsupported content encoding "${encoding}"`);
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge();
    throw ApiError.of('COULD_NOT_READ_BODY', { cause: { code: 'UNHANDLED', message: (err as Error).message } });
  }
}

/**
 * The JSON body of a request, as the Edge API reads it: only when the request has a body with a
 * JSON media type (`application/json`, `application/*+json`), else undefined and the stream is left
 * unread. At most {@link MAX_BODY_BYTES} (413 `REQUEST_ENTITY_TOO_LARGE`, after decompression too);
 * `gzip`, `deflate` and `br` content encodings; a `utf-*` charset (415 otherwise); an empty body is
 * `{}`; any JSON value is accepted; malformed JSON, or JSON nested deeper than
 * {@link MAX_JSON_DEPTH}, is 400 `COULD_NOT_PARSE_BODY`.
 */
export async function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
  if (!hasBody(req) || !isJsonMediaType(mediaTypeOf(req))) return undefined;
  const charset = charsetOf(req);
  const utf8 = charset === 'utf-8' || charset === 'utf8';
  if (!utf8 && (!charset.startsWith('utf-') || !iconv.encodingExists(charset))) {
    throw unsupportedMediaType(`unsupported charset "${charset.toUpperCase()}"`);
  }
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  const buffered = (req as HandedOver)[BUFFERED_BODY];
  const raw = buffered ?? (await readBody(req, limit));
  const body = decompress(raw, encoding, limit);
  // UTF-8 brackets, quotes and backslashes are single bytes: the depth is measured before decoding.
  if (utf8 ? jsonNestsDeeperThan(body, MAX_JSON_DEPTH) : false) throw tooDeep();
  let text = utf8 ? body.toString('utf8') : iconv.decode(body, charset);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.length === 0) return {};
  if (!utf8 && jsonNestsDeeperThan(text, MAX_JSON_DEPTH)) throw tooDeep();
  try {
    return JSON.parse(text);
  } catch (err) {
    throw ApiError.of('COULD_NOT_PARSE_BODY', { cause: { code: 'UNHANDLED', message: String((err as Error).message) } });
  }
}
