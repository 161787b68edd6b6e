import type { OutcomeRecorder } from '@ziti/http-kit';
import { authentications, enrollments, mfaVerifications } from '@ziti/metrics';

const CONTEXT = 'identity-auth';
const LOGIN_METHODS = new Set(['password', 'cert', 'ext-jwt']);

const outcome = (error: unknown) => (error === undefined ? 'success' : 'failure');

/**
 * Login, MFA and token-enrollment outcomes (`ziti_authentications_total`,
 * `ziti_mfa_verifications_total`, `ziti_enrollments_total`), by operation id. The login method
 * label is one of the known methods or `other`, never the caller's text.
 */
export const identityAuthOutcomes: Record<string, OutcomeRecorder> = {
  authenticate(ctx, error) {
    const m = ctx.query.method;
    const method = typeof m === 'string' && LOGIN_METHODS.has(m) ? m : 'other';
    authentications.inc({ context: CONTEXT, method, outcome: outcome(error) });
  },
  authenticateMfa: (_ctx, error) => mfaVerifications.inc({ context: CONTEXT, method: 'login', outcome: outcome(error) }),
  verifyMfa: (_ctx, error) => mfaVerifications.inc({ context: CONTEXT, method: 'enroll-verify', outcome: outcome(error) }),
  enrollToken: (_ctx, error) => enrollments.inc({ context: CONTEXT, method: 'token', outcome: outcome(error) }),
};
