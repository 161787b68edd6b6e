import tls from 'node:tls';
import { Channel, newMessage } from '@ziti/channel';

/**
 * The machine ceiling's server, in its own process like the controller: a TLS listener (the
 * router's own server certificate, client certificates required) where every connection is a
 * bare @ziti/channel that answers each request of content type `ECHO_REQUEST` at once with a
 * small reply. No hello, no handler work: what one channel's request/reply costs on this machine.
 * The key material arrives as JSON in argv[2]; the port goes back over IPC.
 */
export const ECHO_REQUEST = 60_000;
export const ECHO_REPLY = 60_001;

function main(): void {
  const o = JSON.parse(process.argv[2] ?? '{}') as { keyPem: string; certPem: string; caPem: string };
  const reply = Buffer.alloc(200, 1);
  const server = tls.createServer({ key: o.keyPem, cert: o.certPem, ca: o.caPem, requestCert: true, rejectUnauthorized: true }, (socket) => {
    socket.setNoDelay(true);
    const ch = new Channel(socket, { label: 'echo', heartbeatIntervalMs: 0 });
    ch.handle(ECHO_REQUEST, (m) => ch.reply(m, newMessage(ECHO_REPLY, reply)));
  });
  server.listen(0, '127.0.0.1', () => {
    process.send?.({ port: (server.address() as { port: number }).port });
  });
  process.on('message', (m) => {
    if (m === 'stop') server.close(() => process.exit(0));
  });
}

if (require.main === module) main();
