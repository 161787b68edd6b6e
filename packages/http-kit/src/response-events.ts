import { INTERNAL_HEADER_PREFIX } from './principal.js';

/**
 * Events a context hands the gateway on a response, for the gateway's OpenZiti-format event
 * stream: the records of the hottest paths (logins, session creates) are then made without any
 * bus traffic. Each travels as base64url JSON in an internal header, which the gateway takes off
 * every response (proxied or in-process) before the client sees it.
 */

/** What a login attempt came to (OpenZiti's `AuthenticationEvent` fields). */
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

/** A session `POST /sessions` created (not one it returned again). */
export interface SessionCreated {
  sessionId: string;
  apiSessionId: string;
  identityId: string;
  serviceId: string;
  type: string;
}

/** On `POST /authenticate` answers (success and failure). */
export const AUTH_OUTCOME_HEADER = `${INTERNAL_HEADER_PREFIX}auth-outcome`;
/** On `POST /sessions` answers that created a session. */
export const SESSION_CREATED_HEADER = `${INTERNAL_HEADER_PREFIX}session-created`;
export const RESPONSE_EVENT_HEADERS = [AUTH_OUTCOME_HEADER, SESSION_CREATED_HEADER] as const;

export function encodeResponseEvent(event: AuthOutcome | SessionCreated): string {
  return Buffer.from(JSON.stringify(event), 'utf8').toString('base64url');
}

function decode(value: unknown): Record<string, unknown> | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const o = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as unknown;
    return o !== null && typeof o === 'object' ? (o as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The outcome of an `AUTH_OUTCOME_HEADER` value; undefined for anything else. */
export function decodeAuthOutcome(value: unknown): AuthOutcome | undefined {
  const o = decode(value);
  return o && typeof o.method === 'string' && typeof o.success === 'boolean' ? (o as unknown as AuthOutcome) : undefined;
}

/** The session of a `SESSION_CREATED_HEADER` value; undefined for anything else. */
export function decodeSessionCreated(value: unknown): SessionCreated | undefined {
  const o = decode(value);
  return o && typeof o.sessionId === 'string' ? (o as unknown as SessionCreated) : undefined;
}
