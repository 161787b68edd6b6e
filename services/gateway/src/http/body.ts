import type { IncomingMessage } from 'node:http';
import { ApiError } from '@ziti/errors';

/** Thrown by {@link readBody} when the body exceeds the limit. */
export function tooLarge(): ApiError {
  return ApiError.of('REQUEST_ENTITY_TOO_LARGE');
}

/**
 * Buffers a request body of at most `limit` bytes, whatever its framing (`content-length` or
 * chunked). A declared length above the limit fails at once, without reading; a stream that
 * grows past it fails as soon as it does. After a failure the rest of the body is drained and
 * discarded, so that the client can read the 413 before the connection closes.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    req.resume();
    return Promise.reject(tooLarge());
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    const onData = (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        chunks.length = 0;
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      if (!failed) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
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
