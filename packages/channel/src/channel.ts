// A channel over one connected socket: V2 frames both ways, request/reply by sequence (header 1),
// dispatch by content type, heartbeats (openziti/channel heartbeater.go) and bounded backpressure.
import type { Duplex } from 'node:stream';
import { logger } from '@ziti/log';
import { ContentType, Header, REFLECTED_HEADER_MAX, REFLECTED_HEADER_MIN } from './constants.js';
import { ChannelClosedError, FrameError, RequestTimeoutError } from './errors.js';
import { type FrameLimits, FrameDecoder, type Message, encodeFrame, newMessage } from './frame.js';
import { decodeInt32, encodeInt32, encodeUint64 } from './headers.js';

/** The log a channel writes to (a pino-style logger; `@ziti/log` by default). */
export interface ChannelLog {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface ChannelOptions {
  /** Names the channel in logs (e.g. the router id). */
  label?: string;
  limits?: Partial<FrameLimits>;
  /** Bytes already read from the socket after the hello (`acceptHello`/`dialHello` give them). */
  initialBytes?: Buffer;
  /** Send a heartbeat (header 5) this often; 0 disables sending and the unresponsive check. Default 10 000. */
  heartbeatIntervalMs?: number;
  /** Close when no heartbeat response (header 6) came for this long. Default 30 000. */
  unresponsiveMs?: number;
  /** How often the unresponsive check runs. Default 1 000. */
  heartbeatCheckMs?: number;
  /** Close when the socket has not drained for this long after a write was refused. Default 30 000. */
  drainTimeoutMs?: number;
  /** Close when this many bytes wait for the socket to drain. Default 64 MiB. */
  maxQueuedBytes?: number;
  log?: ChannelLog;
}

export type MessageHandler = (msg: Message, channel: Channel) => void | Promise<void>;

export interface RequestOptions {
  /** Reject with RequestTimeoutError after this long. Default 30 000. */
  timeoutMs?: number;
}

interface Waiter {
  resolve(m: Message): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

interface Queued {
  frame: Buffer;
  resolve(): void;
  reject(e: Error): void;
}

const INT32_MAX = 0x7fffffff;

/**
 * One peer's channel. Handlers run in arrival order, synchronously from the socket's data event
 * (an async handler is not awaited; its rejection is logged). A message with header 1 matching a
 * pending `request` resolves it instead; an unknown content type is dropped and counted.
 * Heartbeats (content type 5 and headers 5/6) are handled here and never reach handlers.
 */
export class Channel {
  readonly label: string;
  /** Messages of content types no handler was registered for. */
  droppedUnknown = 0;
  /** When the last heartbeat response arrived (ms since epoch; the start counts as one). */
  lastHeartbeatResponseAt = Date.now();
  private readonly handlers = new Map<number, MessageHandler>();
  private readonly waiters = new Map<number, Waiter>();
  private readonly closeListeners: ((reason: string) => void)[] = [];
  private readonly unknownLogged = new Set<number>();
  private readonly decoder: FrameDecoder;
  private readonly log: ChannelLog;
  private readonly drainTimeoutMs: number;
  private readonly maxQueuedBytes: number;
  private sequence = 0;
  private closedReason: string | undefined;
  private blocked = false;
  private queue: Queued[] = [];
  private queuedBytes = 0;
  private drainTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private checkTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly socket: Duplex,
    options: ChannelOptions = {},
  ) {
    this.label = options.label ?? 'channel';
    this.log = options.log ?? logger('channel');
    this.decoder = new FrameDecoder(options.limits);
    this.drainTimeoutMs = options.drainTimeoutMs ?? 30_000;
    this.maxQueuedBytes = options.maxQueuedBytes ?? 64 * 1024 * 1024;
    // A request/reply protocol: no Nagle delay on a small frame waiting for the peer's ACK (as Go's
    // sockets, which set TCP_NODELAY; a TLS socket passes it to its TCP socket).
    (socket as Duplex & { setNoDelay?: (on: boolean) => unknown }).setNoDelay?.(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('end', () => this.close('peer closed'));
    socket.on('close', () => this.close('socket closed'));
    socket.on('error', (err: Error) => this.close(`socket error: ${err.message}`));
    const interval = options.heartbeatIntervalMs ?? 10_000;
    if (interval > 0) {
      const unresponsiveMs = options.unresponsiveMs ?? 30_000;
      this.heartbeatTimer = setInterval(() => this.sendHeartbeat(), interval);
      this.checkTimer = setInterval(() => {
        if (Date.now() - this.lastHeartbeatResponseAt > unresponsiveMs) this.close('unresponsive: no heartbeat response');
      }, options.heartbeatCheckMs ?? 1_000);
      this.heartbeatTimer.unref();
      this.checkTimer.unref();
    }
    // Bytes read with the hello are dispatched after the caller has registered its handlers.
    queueMicrotask(() => {
      if (options.initialBytes && options.initialBytes.length > 0) this.onData(options.initialBytes);
      if (socket.isPaused() && this.closedReason === undefined) socket.resume();
    });
  }

  get closed(): boolean {
    return this.closedReason !== undefined;
  }

  get closeReason(): string | undefined {
    return this.closedReason;
  }

  /** Registers the handler of one content type (replacing an earlier one). */
  handle(contentType: number, handler: MessageHandler): this {
    this.handlers.set(contentType, handler);
    return this;
  }

  /** Called once, with the reason, when the channel closes (at once if it already has). */
  onClose(listener: (reason: string) => void): void {
    if (this.closedReason !== undefined) listener(this.closedReason);
    else this.closeListeners.push(listener);
  }

  /** Sends a message with the channel's next sequence; resolves once the socket has taken it. */
  send(msg: Message): Promise<void> {
    if (this.closedReason !== undefined) return Promise.reject(new ChannelClosedError(this.closedReason));
    msg.sequence = this.nextSequence();
    return this.write(encodeFrame(msg));
  }

  /** Sends a request and resolves with the message whose header 1 names its sequence. */
  request(msg: Message, options: RequestOptions = {}): Promise<Message> {
    if (this.closedReason !== undefined) return Promise.reject(new ChannelClosedError(this.closedReason));
    const timeoutMs = options.timeoutMs ?? 30_000;
    msg.sequence = this.nextSequence();
    const seq = msg.sequence;
    return new Promise<Message>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(seq);
        reject(new RequestTimeoutError(msg.contentType, seq, timeoutMs));
      }, timeoutMs);
      this.waiters.set(seq, { resolve, reject, timer });
      this.write(encodeFrame(msg)).catch((err: Error) => {
        if (this.waiters.delete(seq)) {
          clearTimeout(timer);
          reject(err);
        }
      });
    });
  }

  /** Sends `msg` as the reply to `to`: header 1 = its sequence, reflected headers (128–255) copied. */
  reply(to: Message, msg: Message): Promise<void> {
    msg.headers.set(Header.ReplyFor, encodeInt32(to.sequence));
    for (const [key, value] of to.headers) {
      if (key >= REFLECTED_HEADER_MIN && key <= REFLECTED_HEADER_MAX && !msg.headers.has(key)) msg.headers.set(key, value);
    }
    return this.send(msg);
  }

  /** Closes the channel and its socket; pending requests and queued sends reject. Idempotent. */
  close(reason: string): void {
    if (this.closedReason !== undefined) return;
    this.closedReason = reason;
    clearInterval(this.heartbeatTimer);
    clearInterval(this.checkTimer);
    clearTimeout(this.drainTimer);
    const err = new ChannelClosedError(reason);
    for (const w of this.waiters.values()) {
      clearTimeout(w.timer);
      w.reject(err);
    }
    this.waiters.clear();
    for (const q of this.queue) q.reject(err);
    this.queue = [];
    this.queuedBytes = 0;
    if (this.blocked) this.socket.destroy();
    else {
      this.socket.end();
      setTimeout(() => this.socket.destroy(), 2_000).unref();
    }
    for (const l of this.closeListeners.splice(0)) {
      try {
        l(reason);
      } catch (e) {
        this.log.warn({ err: e, channel: this.label }, 'channel close listener failed');
      }
    }
  }

  private nextSequence(): number {
    this.sequence = this.sequence >= INT32_MAX ? 1 : this.sequence + 1;
    return this.sequence;
  }

  private write(frame: Buffer): Promise<void> {
    if (this.closedReason !== undefined) return Promise.reject(new ChannelClosedError(this.closedReason));
    if (!this.blocked) {
      if (!this.socket.write(frame)) this.block();
      return Promise.resolve();
    }
    if (this.queuedBytes + frame.length > this.maxQueuedBytes) {
      this.close('send queue full: peer is not reading');
      return Promise.reject(new ChannelClosedError(this.closedReason!));
    }
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ frame, resolve, reject });
      this.queuedBytes += frame.length;
    });
  }

  private block(): void {
    this.blocked = true;
    this.drainTimer = setTimeout(() => this.close('peer is not reading'), this.drainTimeoutMs);
    this.socket.once('drain', () => this.onDrain());
  }

  private onDrain(): void {
    clearTimeout(this.drainTimer);
    this.blocked = false;
    while (this.queue.length > 0 && !this.blocked && this.closedReason === undefined) {
      const q = this.queue.shift()!;
      this.queuedBytes -= q.frame.length;
      if (!this.socket.write(q.frame)) this.block();
      q.resolve();
    }
  }

  private sendHeartbeat(): void {
    const hb = newMessage(ContentType.Heartbeat);
    hb.headers.set(Header.Heartbeat, encodeUint64(BigInt(Date.now()) * 1_000_000n));
    this.send(hb).catch(() => undefined);
  }

  private onData(chunk: Buffer): void {
    if (this.closedReason !== undefined) return;
    let messages: Message[];
    try {
      messages = this.decoder.feed(chunk);
    } catch (err) {
      if (!(err instanceof FrameError)) throw err;
      this.log.warn({ channel: this.label, code: err.code, reason: err.message }, 'closing channel: malformed frame');
      this.close(`malformed frame: ${err.code}`);
      return;
    }
    for (const m of messages) {
      if (this.closedReason !== undefined) return;
      this.dispatch(m);
    }
  }

  private dispatch(m: Message): void {
    const hb = m.headers.get(Header.Heartbeat);
    if (hb) {
      const echo = newMessage(ContentType.Heartbeat);
      echo.headers.set(Header.HeartbeatResponse, hb);
      this.send(echo).catch(() => undefined);
    }
    if (m.headers.has(Header.HeartbeatResponse)) this.lastHeartbeatResponseAt = Date.now();
    if (m.contentType === ContentType.Heartbeat) return;
    const replyFor = m.headers.get(Header.ReplyFor);
    if (replyFor && replyFor.length === 4) {
      const seq = decodeInt32(replyFor);
      const w = this.waiters.get(seq);
      if (w) {
        this.waiters.delete(seq);
        clearTimeout(w.timer);
        w.resolve(m);
        return;
      }
    }
    const handler = this.handlers.get(m.contentType);
    if (!handler) {
      this.droppedUnknown++;
      if (!this.unknownLogged.has(m.contentType) && this.unknownLogged.size < 64) {
        this.unknownLogged.add(m.contentType);
        this.log.debug({ channel: this.label, contentType: m.contentType }, 'dropped message of unhandled content type');
      }
      return;
    }
    try {
      const r = handler(m, this);
      if (r && typeof (r as Promise<void>).catch === 'function') {
        (r as Promise<void>).catch((err: unknown) => this.handlerFailed(m, err));
      }
    } catch (err) {
      this.handlerFailed(m, err);
    }
  }

  private handlerFailed(m: Message, err: unknown): void {
    if (err instanceof ChannelClosedError) return;
    this.log.warn({ err, channel: this.label, contentType: m.contentType }, 'channel message handler failed');
  }
}
