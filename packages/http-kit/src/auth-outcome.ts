import { INTERNAL_HEADER_PREFIX } from './principal.js';

/**
 * What a login attempt came to (OpenZiti's `AuthenticationEvent` fields), handed by identity-auth
 * to the gateway on its `POST /authenticate` response, so the gateway's event stream makes the
 * `authentication` (and `apiSession` `created`) records without any bus traffic on the login path.
 */
export interface AuthOutcome {
  method: string;
  success: boolean;
  remoteAddress: string;
  authenticatorId?: string;
  identityId?: string;
  authPolicyId?: string;
  externalJwtSignerId?: string;
  improperClientCertChain?: boolean;
  /** The new API session (success). */
  apiSessionId?: string;
  /** Why it failed (never sent to the caller). */
  reason?: string;
}

/**
 * The response header carrying the outcome (base64url JSON). An internal header: the gateway
 * takes it off every response (proxied or in-process) before the client sees it.
 */
export const AUTH_OUTCOME_HEADER = `${INTERNAL_HEADER_PREFIX}auth-outcome`;

export function encodeAuthOutcome(o: AuthOutcome): string {
  return Buffer.from(JSON.stringify(o), 'utf8').toString('base64url');
}

/** The outcome of a header value; undefined for anything else. */
export function decodeAuthOutcome(value: unknown): AuthOutcome | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const o = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as AuthOutcome | null;
    return o && typeof o.method === 'string' && typeof o.success === 'boolean' ? o : undefined;
  } catch {
    return undefined;
  }
}
