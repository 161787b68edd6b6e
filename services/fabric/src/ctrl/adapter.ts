import { Channel, type ChannelLog, newMessage } from '@ziti/channel';
import type { Duplex } from 'node:stream';
import type { Message, RouterChannel } from './port.js';

/** A RouterChannel over `@ziti/channel`'s Channel (sends never throw: a closed channel drops them). */
export function routerChannel(socket: Duplex, opts: { label: string; remoteAddress: string; initialBytes: Buffer; log: ChannelLog }): RouterChannel {
  const ch = new Channel(socket, { label: opts.label, initialBytes: opts.initialBytes, log: opts.log });
  let closed = false;
  ch.onClose(() => (closed = true));
  const drop = () => undefined;
  return {
    remoteAddress: opts.remoteAddress,
    send(contentType, body, headers) {
      if (closed) return false;
      ch.send(newMessage(contentType, body, headers)).catch(drop);
      return true;
    },
    request(contentType, body, headers, timeoutMs) {
      return ch.request(newMessage(contentType, body, headers), { timeoutMs });
    },
    reply(to: Message, contentType, body, headers) {
      if (closed) return false;
      ch.reply(to, newMessage(contentType, body, headers)).catch(drop);
      return true;
    },
    handle(contentType, fn) {
      ch.handle(contentType, (m) => fn(m));
    },
    close(reason) {
      ch.close(reason);
    },
    onClose(fn) {
      ch.onClose(fn);
    },
  };
}
