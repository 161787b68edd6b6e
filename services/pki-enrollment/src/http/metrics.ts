import type { OutcomeRecorder } from '@ziti/http-kit';
import { enrollments } from '@ziti/metrics';

/** The enrollment method of each enrolling operation id. */
const METHODS: Record<string, string> = {
  enroll: 'csr',
  enrollOtt: 'ott',
  enrollOttCa: 'ottca',
  enrollCa: 'ca',
  enrollUpdb: 'updb',
  enrollErOtt: 'erott',
  extendRouterEnrollment: 'extend-router',
};

/** Enrollment outcomes (`ziti_enrollments_total`) by method and outcome (success, failure). */
export const enrollmentOutcomes: Record<string, OutcomeRecorder> = Object.fromEntries(
  Object.entries(METHODS).map(([operationId, method]) => {
    const success = { context: 'pki-enrollment', method, outcome: 'success' };
    const failure = { context: 'pki-enrollment', method, outcome: 'failure' };
    const record: OutcomeRecorder = (_ctx, error) => enrollments.inc(error === undefined ? success : failure);
    return [operationId, record];
  }),
);
