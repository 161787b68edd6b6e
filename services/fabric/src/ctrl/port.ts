import type { Message } from '@ziti/channel';

export type { Message };

/** What the control plane needs of a router's channel (an adapter over `@ziti/channel`'s Channel). */
export interface RouterChannel {
  readonly remoteAddress: string;
  /** Sends one message; false when the channel is closed. */
  send(contentType: number, body?: Uint8Array, headers?: Map<number, Buffer>): boolean;
  /** Sends and waits for the reply (header 1 = its sequence). */
  request(contentType: number, body: Uint8Array | undefined, headers: Map<number, Buffer> | undefined, timeoutMs: number): Promise<Message>;
  /** Answers `to` (header 1 = its sequence). */
  reply(to: Message, contentType: number, body?: Uint8Array, headers?: Map<number, Buffer>): boolean;
  /** The handler of one content type (one per type). */
  handle(contentType: number, fn: (m: Message) => void | Promise<void>): void;
  close(reason: string): void;
  onClose(fn: (reason: string) => void): void;
}
