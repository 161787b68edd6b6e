// Typed errors of the channel layer. The owner of a connection closes the socket on any of them
// and logs one line with the error's `code`.

/** Why a frame was refused. */
export type FrameErrorCode =
  | 'BAD_MAGIC'
  | 'NEGATIVE_LENGTH'
  | 'HEADERS_TOO_LONG'
  | 'BODY_TOO_LONG'
  | 'TOO_MANY_HEADERS'
  | 'HEADER_OVERRUN'
  | 'FRAME_TOO_LARGE';

/** A frame that does not follow the channel V2 framing (or exceeds the caller's limits). */
export class FrameError extends Error {
  override readonly name = 'FrameError';
  constructor(
    readonly code: FrameErrorCode,
    message: string,
    /** Bytes to write to the peer before closing (OpenZiti's "unknown version" reply on a bad magic). */
    readonly reply?: Buffer,
  ) {
    super(message);
  }
}

/** A header value whose encoding is wrong (length, count, or a length that overruns the value). */
export class HeaderValueError extends Error {
  override readonly name = 'HeaderValueError';
  constructor(
    readonly header: number | undefined,
    message: string,
  ) {
    super(header === undefined ? message : `header ${header}: ${message}`);
  }
}

/** The channel closed before the operation completed (pending requests, queued sends). */
export class ChannelClosedError extends Error {
  override readonly name = 'ChannelClosedError';
  constructor(readonly reason: string) {
    super(`channel closed: ${reason}`);
  }
}

/** No reply arrived in time for a request. */
export class RequestTimeoutError extends Error {
  override readonly name = 'RequestTimeoutError';
  constructor(
    readonly contentType: number,
    readonly sequence: number,
    readonly timeoutMs: number,
  ) {
    super(`no reply to content type ${contentType} (sequence ${sequence}) within ${timeoutMs} ms`);
  }
}

/** Why a hello exchange failed. */
export type HelloErrorCode = 'TIMEOUT' | 'CLOSED' | 'BAD_FRAME' | 'NOT_HELLO' | 'REFUSED' | 'VALIDATOR_FAILED';

/** The hello exchange failed; the socket is already closed when this is thrown. */
export class HelloError extends Error {
  override readonly name = 'HelloError';
  constructor(
    readonly code: HelloErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
