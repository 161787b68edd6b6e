import { connect } from 'nats';

/**
 * Removes a JetStream stream a test or benchmark created for itself (its own name and subject
 * prefix on a shared NATS server), so runs leave nothing behind. A missing stream is no error.
 */
export async function deleteStream(natsUrl: string | undefined, stream: string | undefined): Promise<void> {
  if (!natsUrl || !stream) return;
  const nc = await connect({ servers: natsUrl });
  try {
    await (await nc.jetstreamManager()).streams.delete(stream).catch((err: { api_error?: { err_code?: number } }) => {
      if (err.api_error?.err_code !== 10059) throw err; // 10059: stream not found
    });
  } finally {
    await nc.close();
  }
}
