// The hello exchange (§1.5): the router's first frame (content type 0, sequence -1) and the
// controller's Result (content type 2, sequence -1, header 1 = -1).
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { CTRL_CHANNEL_TYPE_DEFAULT, ContentType, CtrlHeader, HELLO_SEQUENCE, Header, RouterCapability } from './constants.js';
import { FrameError, HelloError } from './errors.js';
import { type FrameLimits, FrameDecoder, HELLO_FRAME_LIMITS, type Message, encodeFrame, newMessage } from './frame.js';
import { encodeBool, encodeCapabilities, encodeInt32, getBool, getString } from './headers.js';

/** Header 4: `"<version>|<revision>|<buildDate>|<os>|<arch>"` (openziti/foundation versions.go). */
export interface VersionInfo {
  version: string;
  revision: string;
  buildDate: string;
  os: string;
  arch: string;
}

/** Splits a version header; missing fields are empty. */
export function parseVersionHeader(text: string): VersionInfo {
  const [version = '', revision = '', buildDate = '', os = '', arch = ''] = text.split('|');
  return { version, revision, buildDate, os, arch };
}

export function formatVersionHeader(v: VersionInfo): string {
  return [v.version, v.revision, v.buildDate, v.os, v.arch].join('|');
}

/** A router's hello, parsed. */
export interface RouterHello {
  /** The body: the router id (CN of its client certificate). */
  routerId: string;
  /** Header 4 as sent, and parsed. */
  versionText: string | undefined;
  version: VersionInfo | undefined;
  /** Header 1002 (capability mask), empty when absent. */
  capabilities: Buffer;
  /** Header 1000: `ctrl_pb.Listeners`, raw protobuf. */
  listeners: Buffer | undefined;
  /** Header 1003: `ctrl_pb.CtrlChanListeners`, raw protobuf. */
  ctrlChanListeners: Buffer | undefined;
  isGrouped: boolean;
  /** Header 7, e.g. `ctrl.default`. */
  type: string | undefined;
  isFirstGroupConnection: boolean;
  /** Header 0: absent on a router's first dial, `<id>-<n>` on re-dials. */
  connectionId: string | undefined;
  groupSecret: Buffer | undefined;
  /** The frame itself (every header). */
  message: Message;
}

/** What the controller answers an accepted hello with. */
export interface HelloAcceptance {
  accept: true;
  /** Header 8, the controller id. */
  controllerId: string;
  /** Header 4, e.g. `v2.0.3|…|…|linux|amd64` (use formatVersionHeader). */
  controllerVersion: string;
  /** Headers 1002 and 12. */
  capabilities: Buffer;
  /** Header 0; default: the router's, or a fresh random id. */
  connectionId?: string;
}

export interface HelloRefusal {
  accept: false;
  reason: string;
  /** Close without a Result (what the Go controller does on a failed certificate check). */
  silent?: boolean;
}

export type HelloVerdict = HelloAcceptance | HelloRefusal;

export interface AcceptHelloOptions {
  /** Default 10 000. */
  timeoutMs?: number;
  limits?: Partial<FrameLimits>;
}

export interface AcceptedHello {
  hello: RouterHello;
  /** Bytes that followed the hello (pass as `initialBytes` to the Channel). */
  remainder: Buffer;
}

/** Parses a hello frame's fields. */
export function parseRouterHello(m: Message): RouterHello {
  const versionText = getString(m.headers, Header.HelloVersion);
  return {
    routerId: m.body.toString('utf8'),
    versionText,
    version: versionText === undefined ? undefined : parseVersionHeader(versionText),
    capabilities: m.headers.get(CtrlHeader.Capabilities) ?? Buffer.alloc(0),
    listeners: m.headers.get(CtrlHeader.Listeners),
    ctrlChanListeners: m.headers.get(CtrlHeader.CtrlChanListeners),
    isGrouped: getBool(m.headers, Header.IsGrouped) ?? false,
    type: getString(m.headers, Header.Type),
    isFirstGroupConnection: getBool(m.headers, Header.IsFirstGroupConnection) ?? false,
    connectionId: getString(m.headers, Header.ConnectionId),
    groupSecret: m.headers.get(Header.GroupSecret),
    message: m,
  };
}

/** Reads exactly the first frame of a socket, with a timeout; pauses the socket once it has it. */
function readFirstFrame(socket: Duplex, timeoutMs: number, limits: Partial<FrameLimits>): Promise<{ message: Message; remainder: Buffer }> {
  const decoder = new FrameDecoder({ ...HELLO_FRAME_LIMITS, ...limits });
  return new Promise((resolve, reject) => {
    const done = (err: HelloError | undefined, result?: { message: Message; remainder: Buffer }) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      socket.off('error', onError);
      if (err) reject(err);
      else resolve(result!);
    };
    const onData = (chunk: Buffer) => {
      try {
        decoder.push(chunk);
        const message = decoder.next();
        if (!message) return;
        socket.pause();
        done(undefined, { message, remainder: decoder.takeRemainder() });
      } catch (err) {
        if (!(err instanceof FrameError)) throw err;
        if (err.reply) socket.write(err.reply);
        socket.end();
        done(new HelloError('BAD_FRAME', `malformed hello frame: ${err.code}: ${err.message}`, { cause: err }));
      }
    };
    const onEnd = () => done(new HelloError('CLOSED', 'connection closed before the hello'));
    const onError = (err: Error) => done(new HelloError('CLOSED', `connection failed before the hello: ${err.message}`, { cause: err }));
    const timer = setTimeout(() => {
      socket.destroy();
      done(new HelloError('TIMEOUT', `no hello within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('close', onEnd);
    socket.once('error', onError);
    if (socket.isPaused()) socket.resume();
  });
}

/**
 * Server side: reads the router's hello, asks `validate`, and writes the Result (or a refusal).
 * Resolves with the hello when accepted (the socket is paused; build the Channel on it with
 * `initialBytes: remainder`). Rejects with a HelloError, the socket closed, otherwise.
 */
export async function acceptHello(
  socket: Duplex,
  validate: (hello: RouterHello) => HelloVerdict | Promise<HelloVerdict>,
  options: AcceptHelloOptions = {},
): Promise<AcceptedHello> {
  const { message, remainder } = await readFirstFrame(socket, options.timeoutMs ?? 10_000, options.limits ?? {});
  if (message.contentType !== ContentType.Hello) {
    socket.destroy();
    throw new HelloError('NOT_HELLO', `first frame has content type ${message.contentType}, not hello`);
  }
  const hello = parseRouterHello(message);
  let verdict: HelloVerdict;
  try {
    verdict = await validate(hello);
  } catch (err) {
    socket.destroy();
    throw new HelloError('VALIDATOR_FAILED', 'hello validation failed', { cause: err });
  }
  const result = newMessage(ContentType.Result);
  result.sequence = HELLO_SEQUENCE;
  result.headers.set(Header.ReplyFor, encodeInt32(HELLO_SEQUENCE));
  if (!verdict.accept) {
    if (!verdict.silent) {
      result.body = Buffer.from(verdict.reason, 'utf8');
      result.headers.set(Header.ResultSuccess, encodeBool(false));
      socket.end(encodeFrame(result));
    } else socket.destroy();
    throw Object.assign(new HelloError('REFUSED', `hello refused: ${verdict.reason}`), { hello });
  }
  result.headers.set(Header.ResultSuccess, encodeBool(true));
  result.headers.set(Header.HelloVersion, Buffer.from(verdict.controllerVersion, 'utf8'));
  result.headers.set(CtrlHeader.Capabilities, verdict.capabilities);
  result.headers.set(CtrlHeader.LegacyCapabilities, verdict.capabilities);
  result.headers.set(Header.Id, Buffer.from(verdict.controllerId, 'utf8'));
  result.headers.set(Header.ConnectionId, Buffer.from(verdict.connectionId ?? hello.connectionId ?? randomBytes(16).toString('hex'), 'utf8'));
  for (const h of [Header.IsGrouped, Header.Type]) {
    const v = message.headers.get(h);
    if (v) result.headers.set(h, v);
  }
  if (hello.isGrouped) result.headers.set(Header.GroupSecret, hello.groupSecret ?? randomBytes(16));
  socket.write(encodeFrame(result));
  return { hello, remainder };
}

/** What a router sends in its hello (defaults: a 2.0.x router's first underlay). */
export interface DialHelloOptions {
  routerId: string;
  /** Header 4. Default `v2.0.3|0000000|2026-01-01 00:00:00|linux|amd64`. */
  version?: string;
  /** Header 1002. Default bit 1 (RouterMultiChannel) → 0x02. */
  capabilities?: Buffer;
  /** Header 1000: `ctrl_pb.Listeners`, encoded; omitted when undefined. */
  listeners?: Buffer;
  /** Header 0 (omitted on a first dial). */
  connectionId?: string;
  isGrouped?: boolean;
  type?: string;
  isFirstGroupConnection?: boolean;
  /** Extra headers, set last (may override). */
  headers?: Iterable<readonly [number, Buffer]>;
  timeoutMs?: number;
}

export interface DialedHello {
  result: Message;
  controllerId: string | undefined;
  controllerVersion: VersionInfo | undefined;
  capabilities: Buffer;
  connectionId: string | undefined;
  remainder: Buffer;
}

/** Builds a router hello frame's message. */
export function routerHelloMessage(o: DialHelloOptions): Message {
  const m = newMessage(ContentType.Hello, o.routerId);
  m.sequence = HELLO_SEQUENCE;
  m.headers.set(Header.HelloVersion, Buffer.from(o.version ?? 'v2.0.3|0000000|2026-01-01 00:00:00|linux|amd64', 'utf8'));
  m.headers.set(CtrlHeader.Capabilities, o.capabilities ?? encodeCapabilities([RouterCapability.MultiChannel]));
  if (o.listeners) m.headers.set(CtrlHeader.Listeners, o.listeners);
  if (o.isGrouped ?? true) m.headers.set(Header.IsGrouped, encodeBool(true));
  m.headers.set(Header.Type, Buffer.from(o.type ?? CTRL_CHANNEL_TYPE_DEFAULT, 'utf8'));
  if (o.isFirstGroupConnection ?? true) m.headers.set(Header.IsFirstGroupConnection, encodeBool(true));
  if (o.connectionId !== undefined) m.headers.set(Header.ConnectionId, Buffer.from(o.connectionId, 'utf8'));
  for (const [k, v] of o.headers ?? []) m.headers.set(k, v);
  return m;
}

/**
 * Client side: sends a router hello and reads the controller's Result. Resolves when it says
 * success (the socket paused; build the Channel with `initialBytes: remainder`); rejects with a
 * HelloError (`REFUSED` carrying the Result's text) otherwise.
 */
export async function dialHello(socket: Duplex, o: DialHelloOptions): Promise<DialedHello> {
  socket.write(encodeFrame(routerHelloMessage(o)));
  const { message, remainder } = await readFirstFrame(socket, o.timeoutMs ?? 10_000, { maxBodyBytes: 64 * 1024, maxHeaderBytes: 64 * 1024 });
  if (message.contentType !== ContentType.Result || getBool(message.headers, Header.ResultSuccess) !== true) {
    socket.destroy();
    throw new HelloError('REFUSED', `hello refused (content type ${message.contentType}): ${message.body.toString('utf8')}`);
  }
  const version = getString(message.headers, Header.HelloVersion);
  return {
    result: message,
    controllerId: getString(message.headers, Header.Id),
    controllerVersion: version === undefined ? undefined : parseVersionHeader(version),
    capabilities: message.headers.get(CtrlHeader.Capabilities) ?? Buffer.alloc(0),
    connectionId: getString(message.headers, Header.ConnectionId),
    remainder,
  };
}
