import { type OutcomeRecorder, outcomeCode } from '@ziti/http-kit';
import { sessionCreates } from '@ziti/metrics';

/**
 * Session create outcomes (`ziti_session_creates_total`): by type (`Dial`, `Bind`, else `other`)
 * and outcome (`success`, or the error code answered, e.g. `INVALID_POSTURE`).
 */
export const sessionOutcomes: Record<string, OutcomeRecorder> = {
  createSession(ctx, error) {
    const t = (ctx.body as { type?: unknown } | undefined)?.type;
    const type = t === 'Dial' || t === 'Bind' ? t : t === undefined ? 'Dial' : 'other';
    sessionCreates.inc({ context: 'session', type, outcome: error === undefined ? 'success' : outcomeCode(error) });
  },
};
