import { acceptRequestId, logger, runWithRequest } from '@ziti/log';
import { eventConsumeLag, eventsConsumed } from '@ziti/metrics';
import type { ChangeEvent } from './types.js';

const log = logger('messaging');

/**
 * Runs `fn` as part of the request that caused `event` (its `requestId`, when it has a
 * well-formed one): whatever the consumer logs meanwhile, its failure included, carries that id.
 */
export function inEventRequest<T>(event: Pick<ChangeEvent, 'requestId'>, fn: () => T): T {
  const requestId = acceptRequestId(event.requestId);
  return requestId === undefined ? fn() : runWithRequest({ requestId }, fn);
}

/**
 * The handler with its outcomes counted (`ziti_events_consumed_total`) and the time from the
 * event's `occurredAt` to its handling observed (`ziti_event_consume_lag_seconds`), by consumer
 * (a durable group, or `broadcast`). It runs in the request context of the event (see
 * `inEventRequest`) and logs each event handled at debug level.
 */
export function consumed<E extends ChangeEvent>(consumer: string, handler: (event: E) => Promise<void> | void): (event: E) => Promise<void> {
  return (event) =>
    inEventRequest(event, async () => {
      const at = Date.parse(event.occurredAt);
      if (Number.isFinite(at)) eventConsumeLag.observe({ consumer }, Math.max(0, Date.now() - at) / 1000);
      try {
        await handler(event);
        eventsConsumed.inc({ consumer, outcome: 'ok' });
      } catch (err) {
        eventsConsumed.inc({ consumer, outcome: 'error' });
        throw err;
      }
      log.debug({ consumer, eventId: event.id, eventType: event.type, eventSource: event.source }, 'event handled');
    });
}
