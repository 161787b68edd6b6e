import { eventConsumeLag, eventsConsumed } from '@ziti/metrics';
import type { ChangeEvent } from './types.js';

/**
 * The handler with its outcomes counted (`ziti_events_consumed_total`) and the time from the
 * event's `occurredAt` to its handling observed (`ziti_event_consume_lag_seconds`), by consumer
 * (a durable group, or `broadcast`).
 */
export function consumed<E extends ChangeEvent>(consumer: string, handler: (event: E) => Promise<void> | void): (event: E) => Promise<void> {
  return async (event) => {
    const at = Date.parse(event.occurredAt);
    if (Number.isFinite(at)) eventConsumeLag.observe({ consumer }, Math.max(0, Date.now() - at) / 1000);
    try {
      await handler(event);
      eventsConsumed.inc({ consumer, outcome: 'ok' });
    } catch (err) {
      eventsConsumed.inc({ consumer, outcome: 'error' });
      throw err;
    }
  };
}
